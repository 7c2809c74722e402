/** Authentication and admission, in the contract's order, on sync and batch. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { keysSetStatus } from '../../src/cli/commands/keys.js';
import { loggerOptions } from '../../src/telemetry/logging.js';
import { readFixture } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

let t: TestApp;
const png = readFixture('camera.png').toString('base64');
let n = 0;
const syncBody = () => ({ external_id: `auth-${++n}`, image_base64: png });

before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t?.close();
});

function sync(key: string | undefined, body: object = syncBody()) {
  return t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: key === undefined ? {} : { 'x-api-key': key }, payload: body });
}
function batch(key: string | undefined, body: object) {
  return t.app.inject({ method: 'POST', url: '/v1/cv/requests/batch', headers: key === undefined ? {} : { 'x-api-key': key }, payload: body });
}

function assertError(res: { statusCode: number; body: string }, status: number, error: string, code: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.equal(body.error, error);
  assert.equal(body.error_code, code);
  assert.equal(typeof body.message, 'string');
  assert.ok((body.message as string).length > 0);
}

describe('401', () => {
  test('missing x-api-key: unauthorized MISSING_API_KEY, message says so', async () => {
    for (const res of [await sync(undefined), await batch(undefined, { image_urls: ['http://x.test/a.png'] })]) {
      assertError(res, 401, 'unauthorized', 'MISSING_API_KEY');
      assert.match(json(res).message as string, /x-api-key/);
    }
    const lookup = await t.app.inject({ method: 'GET', url: '/v1/cv/requests/00000000-0000-4000-8000-000000000000' });
    assertError(lookup, 401, 'unauthorized', 'MISSING_API_KEY');
    const fb = await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', payload: { request_id: '00000000-0000-4000-8000-000000000000', rating: 1 } });
    assertError(fb, 401, 'unauthorized', 'MISSING_API_KEY');
  });

  test('unknown key: 401 INVALID_API_KEY (the rules win over the endpoint table)', async () => {
    assertError(await sync('cvk_not-a-real-key'), 401, 'unauthorized', 'INVALID_API_KEY');
    assertError(await sync('x'.repeat(5000)), 401, 'unauthorized', 'INVALID_API_KEY');
  });

  test('expired key: 401 API_KEY_EXPIRED, before the status check', async () => {
    const k = await t.newKey({ expiresAt: new Date(Date.now() - 1000), status: 'suspended' });
    assertError(await sync(k.key), 401, 'unauthorized', 'API_KEY_EXPIRED');
  });
});

describe('403 style B Forbidden', () => {
  test('suspended key: KEY_SUSPENDED, and resumed works again', async () => {
    const k = await t.newKey();
    assert.equal((await sync(k.key)).statusCode, 200);
    await keysSetStatus({ db: t.db }, k.id, 'suspend');
    assertError(await sync(k.key), 403, 'Forbidden', 'KEY_SUSPENDED');
    assertError(await batch(k.key, { image_urls: ['http://x.test/a.png'] }), 403, 'Forbidden', 'KEY_SUSPENDED');
    await keysSetStatus({ db: t.db }, k.id, 'resume');
    assert.equal((await sync(k.key)).statusCode, 200);
  });

  test('revoked key: KEY_REVOKED', async () => {
    const k = await t.newKey();
    await keysSetStatus({ db: t.db }, k.id, 'revoke');
    assertError(await sync(k.key), 403, 'Forbidden', 'KEY_REVOKED');
  });

  test('suspended organisation: ORGANIZATION_SUSPENDED', async () => {
    const k = await t.newKey();
    await t.db('organizations').where({ id: k.orgId }).update({ status: 'suspended' });
    assertError(await sync(k.key), 403, 'Forbidden', 'ORGANIZATION_SUSPENDED');
    assertError(await batch(k.key, { image_urls: ['http://x.test/a.png'] }), 403, 'Forbidden', 'ORGANIZATION_SUSPENDED');
  });

  test('no classes mapped: NO_CLASSES on sync and batch', async () => {
    const k = await t.newKey({ classes: [] });
    assertError(await sync(k.key), 403, 'Forbidden', 'NO_CLASSES');
    assertError(await batch(k.key, { image_urls: ['http://x.test/a.png'] }), 403, 'Forbidden', 'NO_CLASSES');
  });
});

describe('429, 402: limits after authentication', () => {
  test('rate limit: RateLimit-* headers, then 429 RATE_LIMITED with Retry-After', async () => {
    const k = await t.newKey({ rateLimit: 2 });
    const first = await batch(k.key, { image_urls: ['ftp://x.test/a.png'] });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['ratelimit-limit'], '2');
    assert.equal(first.headers['ratelimit-remaining'], '1');
    assert.ok(Number(first.headers['ratelimit-reset']) >= 0);
    assert.equal((await sync(k.key)).statusCode, 200);
    const third = await sync(k.key);
    assertError(third, 429, 'Too Many Requests', 'RATE_LIMITED');
    assert.ok(Number(third.headers['retry-after']) >= 1);
    assert.equal(third.headers['ratelimit-remaining'], '0');
  });

  test('monthly quota: 429 MONTHLY_QUOTA_EXCEEDED, nothing recorded', async () => {
    const k = await t.newKey({ quota: 1 });
    assert.equal((await sync(k.key)).statusCode, 200);
    const res = await sync(k.key);
    assertError(res, 429, 'Too Many Requests', 'MONTHLY_QUOTA_EXCEEDED');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    const rows = await t.db('requests').where({ key_id: k.id });
    assert.equal(rows.length, 1);
    assertError(await batch(k.key, { image_urls: ['http://127.0.0.1:9/a.png'] }), 429, 'Too Many Requests', 'MONTHLY_QUOTA_EXCEEDED');
  });

  test('call balance: 402 INSUFFICIENT_BALANCE on batch (one per URL) and sync; never below zero', async () => {
    const k = await t.newKey({ balance: 1 });
    const res = await batch(k.key, { image_urls: ['http://127.0.0.1:9/a.png', 'http://127.0.0.1:9/b.png'] });
    assertError(res, 402, 'payment_required', 'INSUFFICIENT_BALANCE');
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 1);
    assert.equal((await sync(k.key)).statusCode, 200);
    assertError(await sync(k.key), 402, 'payment_required', 'INSUFFICIENT_BALANCE');
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 0);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 1, 'a refused call leaves no request behind');
  });
});

test('the key never appears in error bodies or the database', async () => {
  const k = await t.newKey({ status: 'suspended' });
  const res = await sync(k.key);
  assert.ok(!res.body.includes(k.key));
  const row = await t.db('api_keys').where({ id: k.id }).first();
  assert.ok(!JSON.stringify(row).includes(k.key));
});

test('the key is never logged, even at trace level and on failures', async () => {
  const lines: string[] = [];
  const logger = pino(loggerOptions('trace'), { write: (line: string) => void lines.push(line) });
  const app = await buildApp({ ...t.services }, { loggerInstance: logger, sweepAbandoned: false });
  const good = await t.newKey();
  const made = 'cvk_this-is-a-made-up-key-that-must-not-be-logged';
  try {
    const send = (key: string, body: object) => app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': key }, payload: body });
    assert.equal((await send(good.key, syncBody())).statusCode, 200);
    assert.equal((await send(made, syncBody())).statusCode, 401);
    assert.equal((await send(good.key, { external_id: 'x', image_base64: '!!' })).statusCode, 400);
  } finally {
    await app.close();
  }
  const all = lines.join('');
  assert.ok(lines.length > 0, 'something was logged');
  assert.ok(!all.includes(good.key));
  assert.ok(!all.includes(made));
});

test('last_used_at is recorded', async () => {
  const k = await t.newKey();
  await sync(k.key);
  const used = await eventually(async () => (await t.db('api_keys').where({ id: k.id }).first()).last_used_at, { what: 'last_used_at set', intervalMs: 20 });
  assert.ok(used instanceof Date);
});
