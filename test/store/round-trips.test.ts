/**
 * PostgreSQL round trips per request on the hot path, counted on the app's real
 * connection (knex 'query' events): refusals before admission cost one, a successful
 * base64 sync three statements, waited for in turn.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';

let t: TestApp;
let queries: string[] = [];
// The console's refusal counter writes in onResponse, after the answer is sent: not on the hot path.
const AFTER_ANSWER = /key_refusals_daily/;
const record = (q: { sql: string }) => {
  if (!AFTER_ANSWER.test(q.sql)) queries.push(q.sql);
};

before(async () => {
  t = await buildTestApp();
  t.db.on('query', record);
});
after(async () => {
  t?.db.off('query', record);
  await t?.close();
});

async function count(key: string, payload: object): Promise<{ status: number; queries: string[] }> {
  queries = [];
  const res = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': key }, payload });
  return { status: res.statusCode, queries: [...queries] };
}

const image = readFixture('camera.png').toString('base64');

// Authenticate (one statement), admit (claim + quota + balance + the row, one function
// call), finish. An image in the body has nothing to fetch, so admission writes the row
// PROCESSING and no separate PROCESSING write follows. See docs/api.md, "Request path".
test('a successful base64 sync takes 3 statements (PROCESSING at admission, DONE) and never re-reads its row at the end', async () => {
  const k: TestKey = await t.newKey({ balance: 100 });
  const res = await count(k.key, { external_id: 'rt-1', image_base64: image });
  assert.equal(res.status, 200);
  assert.equal(res.queries.length, 3, `${res.queries.length} queries:\n${res.queries.join('\n')}`);
  assert.match(res.queries[1], /recognition_admit/);
  assert.match(res.queries[2], /^update "requests" set "status" = \$1, "results" = \$2/);
  // No read-back after the final write: the ending update returns the row.
  assert.ok(!/^select/i.test(res.queries.at(-1) ?? ''), res.queries.at(-1));
});

test('a replay costs 2 round trips (authenticate, admit finds it), a quota or balance refusal 2', async () => {
  const k = await t.newKey({ balance: 1, quota: 1 });
  assert.equal((await count(k.key, { external_id: 'rp-1', image_base64: image })).status, 200);
  const replay = await count(k.key, { external_id: 'rp-1', image_base64: image });
  assert.equal(replay.status, 200);
  assert.equal(replay.queries.length, 2, replay.queries.join('\n'));
  const quota = await count(k.key, { external_id: 'rp-2', image_base64: image });
  assert.equal(quota.status, 429);
  assert.equal(quota.queries.length, 2, quota.queries.join('\n'));
  const poor = await t.newKey({ balance: 0 });
  const balance = await count(poor.key, { external_id: 'rp-3', image_base64: image });
  assert.equal(balance.status, 402);
  assert.equal(balance.queries.length, 2, balance.queries.join('\n'));
});

test('refusals before admission cost one round trip: 401 unknown key, 403 suspended key, 429 rate limited', async () => {
  const unknown = await count('cvk_not-a-real-key-at-all', { external_id: 'x', image_base64: image });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.queries.length, 1, unknown.queries.join('\n'));

  const suspended = await t.newKey({ status: 'suspended' });
  const forbidden = await count(suspended.key, { external_id: 'x', image_base64: image });
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.queries.length, 1, forbidden.queries.join('\n'));

  const limited = await t.newKey({ rateLimit: 1 });
  await count(limited.key, { external_id: 'rl-1', image_base64: image });
  const refused = await count(limited.key, { external_id: 'rl-2', image_base64: image });
  assert.equal(refused.status, 429);
  assert.equal(refused.queries.length, 1, refused.queries.join('\n'));
});

test('last_used_at is recorded by the authenticating statement itself', async () => {
  const k = await t.newKey();
  await count(k.key, { external_id: 'lu-1' }); // refused (400) after authentication
  const row = await t.db('api_keys').where({ id: k.id }).first();
  assert.ok(row.last_used_at instanceof Date);
});
