/**
 * The SDK never hands a credential to a server it was not meant for (issue 29): no redirect
 * is followed with the API key, a password or a token; tokens go only to the server that
 * issued them; plain http is refused except to loopback. Real HTTP on loopback: one server
 * redirects, another records whether anything reached it.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ConsoleClient, InsecureBaseUrlError, MemoryTokenStore, NotLoggedInError, RecognitionClient, RedirectError } from '@recognition-service/client';
import { fakeService, redirectingServer, REQUEST_ID, type RecordingServer } from './loopback-servers.js';

const servers: RecordingServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));
async function keep(s: Promise<RecordingServer>): Promise<RecordingServer> {
  const server = await s;
  servers.push(server);
  return server;
}

/** A server answering `status` to everything, pointing at a second one that records what it got. */
async function redirectPair(status: number): Promise<{ from: RecordingServer; to: RecordingServer }> {
  const to = await keep(fakeService());
  const from = await keep(redirectingServer(() => to.url, status));
  return { from, to };
}

for (const status of [302, 307]) {
  test(`a ${status} is not followed: x-api-key never reaches the Location`, async () => {
    const { from, to } = await redirectPair(status);
    const client = new RecognitionClient({ baseUrl: from.url, apiKey: 'cvk_secret', maxRetries: 3 });
    await assert.rejects(client.recognize({ externalId: 'e1', imageUrl: 'https://img.example/1.png' }), (e: unknown) => {
      assert.ok(e instanceof RedirectError, String(e));
      assert.equal(e.status, status);
      assert.equal(e.location, `${to.url}/v1/cv/requests/sync`);
      assert.match(e.message, new RegExp(`${to.url}/v1/cv/requests/sync`));
      return true;
    });
    await assert.rejects(client.getRequest(REQUEST_ID), RedirectError);
    assert.equal(to.received.length, 0, `reached the Location: ${JSON.stringify(to.received.map((r) => r.headers['x-api-key']))}`);
    assert.equal(from.received.length, 2, 'a redirect is never retried');
  });
}

test('console: a redirected login, refresh or call carries neither the password, the refresh token nor the bearer token', async () => {
  const { from, to } = await redirectPair(307);
  const store = new MemoryTokenStore();
  const client = new ConsoleClient({ baseUrl: from.url, store });
  await assert.rejects(client.login('dana@example.com', 'the password'), RedirectError);
  // Tokens this server issued, the access token expired: me() refreshes first.
  await store.save({ accessToken: 'access-0', accessExpiresAt: 0, refreshToken: 'refresh-0', origin: from.url });
  await assert.rejects(client.me(), RedirectError);
  await store.save({ accessToken: 'access-0', accessExpiresAt: Date.now() + 600_000, refreshToken: 'refresh-0', origin: from.url });
  await assert.rejects(client.listKeys('acme'), RedirectError);
  assert.deepEqual(to.received, [], 'nothing reached the Location');
  assert.deepEqual(from.received.map((r) => r.url), ['/console/api/v1/auth/login', '/console/api/v1/auth/refresh', '/console/api/v1/orgs/acme/keys']);
});

test('tokens are bound to the server that issued them: a client for another origin never sends them', async () => {
  const a = await keep(fakeService());
  const b = await keep(fakeService());
  const store = new MemoryTokenStore();
  await new ConsoleClient({ baseUrl: a.url, store }).login('dana@example.com', 'pw');
  assert.equal((await store.load())?.origin, a.url);

  const atB = new ConsoleClient({ baseUrl: `${b.url}/`, store });
  await assert.rejects(atB.me(), (e: unknown) => e instanceof NotLoggedInError && e.message.includes(b.url) && e.message.includes(a.url) && /log in again/.test(e.message));
  // Expired: the refresh token must not go to B either.
  await store.save({ ...(await store.load())!, accessExpiresAt: 0 });
  await assert.rejects(atB.me(), NotLoggedInError);
  await assert.rejects(atB.logout(), NotLoggedInError);
  assert.deepEqual(b.received, [], 'B saw no token');
  assert.ok(await store.load(), 'the login for A is kept: logging out of B does not end it');

  // Tokens saved before they carried their origin are sent nowhere.
  const { origin: _origin, ...unbound } = (await store.load())!;
  await store.save(unbound as never);
  await assert.rejects(new ConsoleClient({ baseUrl: a.url, store }).me(), NotLoggedInError);
  assert.equal(a.received.filter((r) => r.url === '/console/api/v1/me').length, 0);

  // A new login at B binds the store to B; A then gets nothing.
  await atB.login('dana@example.com', 'pw');
  assert.equal((await atB.me()).user.email, 'dana@example.com');
  await assert.rejects(new ConsoleClient({ baseUrl: a.url, store }).me(), NotLoggedInError);
  assert.ok(a.received.every((r) => r.headers.authorization === undefined && !r.body.includes('refresh-')), 'A never got B\'s tokens');
});

test('plain http is refused except to loopback; https and the loudly named opt-out are accepted', async () => {
  const refused = ['http://example.invalid', 'http://10.0.0.5:8080', 'http://localhost.example.com', 'http://127.0.0.1.nip.io', 'http://[::2]', 'ftp://127.0.0.1'];
  for (const baseUrl of refused) {
    assert.throws(() => new RecognitionClient({ baseUrl, apiKey: 'cvk_x' }), InsecureBaseUrlError, baseUrl);
    assert.throws(() => new ConsoleClient({ baseUrl }), InsecureBaseUrlError, baseUrl);
  }
  assert.throws(() => new RecognitionClient({ baseUrl: 'http://example.invalid', apiKey: 'cvk_x' }), /refusing plain http to example\.invalid.*https:\/\/example\.invalid/);
  for (const baseUrl of ['https://example.invalid', 'http://localhost:8080', 'http://127.0.0.1', 'http://127.1.2.3:9', 'http://[::1]:8080', 'http://LOCALHOST/']) {
    assert.doesNotThrow(() => new RecognitionClient({ baseUrl, apiKey: 'cvk_x' }), baseUrl);
  }
  assert.doesNotThrow(() => new RecognitionClient({ baseUrl: 'http://example.invalid', apiKey: 'cvk_x', allowInsecureHttp: true }));

  const svc = await keep(fakeService());
  assert.match(svc.url, /^http:\/\/127\.0\.0\.1:/);
  assert.equal((await new RecognitionClient({ baseUrl: svc.url, apiKey: 'cvk_x' }).getRequest(REQUEST_ID)).requestId, REQUEST_ID);
});
