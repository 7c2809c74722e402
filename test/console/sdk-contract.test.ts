/**
 * The agreed console API contract, as the SDK of issue 17 uses it, against the real
 * service: login, bearer calls, refresh when the access token is due, a stolen (spent)
 * refresh token refused and the session revoked, key operations, usage, logout.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ConsoleClient, MemoryTokenStore, NotLoggedInError } from '@recognition-service/client';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { agePastGrace, API, consoleUser, PASSWORD } from '../helpers/console.js';

let t: TestApp;
let baseUrl: string;

before(async () => {
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const org = await createOrg(t.db, { name: 'sdk-org', balance: 100 });
  await consoleUser(t.db, 'sdk@example.com', [{ orgId: org.id, role: 'admin' }]);
});
after(async () => {
  await t?.close();
});

test('the SDK signs in, manages keys, refreshes, and a replayed refresh token ends the session', async () => {
  const store = new MemoryTokenStore();
  const client = new ConsoleClient({ baseUrl, store });
  const user = await client.login('sdk@example.com', PASSWORD);
  assert.equal(user?.email, 'sdk@example.com');
  const me = await client.me();
  assert.deepEqual(me.memberships.map((m) => `${m.org.name}:${m.role}`), ['sdk-org:admin']);

  const { key, secret } = await client.createKey('sdk-org', { name: 'cli', classes: ['person'], monthly_quota: 50 });
  assert.match(secret, /^cvk_/);
  assert.equal((await client.updateKey('sdk-org', key.id, { description: 'from the SDK' })).description, 'from the SDK');
  assert.equal((await client.setKeyStatus('sdk-org', key.id, 'suspend')).status, 'suspended');
  assert.deepEqual((await client.listKeys('sdk-org')).map((k) => [k.name, k.status]), [['cli', 'suspended']]);

  // the access token is due: the next call refreshes first, with a new refresh token
  const before = (await store.load())!;
  await store.save({ ...before, accessExpiresAt: 0 });
  const usage = await client.usage('sdk-org', { days: 7 });
  assert.equal(usage.days.length, 7);
  const rotated = (await store.load())!;
  assert.notEqual(rotated.refreshToken, before.refreshToken);

  // someone replays the spent refresh token (after its grace): refused, and the session (with the SDK's new tokens) is revoked
  await agePastGrace(t.db, before.refreshToken);
  const replay = await fetch(`${baseUrl}${API}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: before.refreshToken }) });
  assert.equal(replay.status, 401);
  assert.equal(((await replay.json()) as { error_code: string }).error_code, 'REFRESH_REUSED');
  await assert.rejects(client.listKeys('sdk-org'), NotLoggedInError);

  // a new sign-in works; logout revokes it
  await client.login('sdk@example.com', PASSWORD);
  assert.equal((await client.setKeyStatus('sdk-org', key.id, 'revoke')).status, 'revoked');
  const live = (await store.load())!;
  await client.logout();
  const after = await fetch(`${baseUrl}${API}/me`, { headers: { authorization: `Bearer ${live.accessToken}` } });
  assert.equal(after.status, 401);
});
