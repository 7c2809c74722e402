/**
 * The console API on real PostgreSQL: sessions (rotation, reuse detection, logout), CSRF
 * for cookie sessions, no x-api-key, roles on every route, keys and their audit rows,
 * members (the last owner stays), usage with refusals, requests and feedback.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { API, PASSWORD, agePastGrace, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

let t: TestApp;
let seed: TestKey; // an organisation with one key made by the CLI
const tokens: Record<'owner' | 'admin' | 'member' | 'viewer' | 'outsider', Tokens> = {} as never;
const ids: Record<string, string> = {};

before(async () => {
  t = await buildTestApp();
  seed = await t.newKey();
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
    ids[role] = (await consoleUser(t.db, `${role}@example.com`, [{ orgId: seed.orgId, role }])).id;
  }
  ids.outsider = (await consoleUser(t.db, 'outsider@example.com')).id;
  for (const who of Object.keys(tokens) as never[]) void who;
  for (const who of ['owner', 'admin', 'member', 'viewer', 'outsider'] as const) tokens[who] = await login(t.app, `${who}@example.com`);
});
after(async () => {
  await t?.close();
});

function call(method: string, url: string, who: keyof typeof tokens | null, payload?: object) {
  return t.app.inject({ method: method as 'GET', url: `${API}${url}`, headers: who ? bearer(tokens[who]) : {}, ...(payload ? { payload } : {}) });
}

function assertError(res: { statusCode: number; body: string }, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.equal(body.error_code, code, res.body);
  assert.equal(typeof body.error, 'string');
  assert.ok(typeof body.message === 'string' && body.message.length > 0);
}

describe('sign-in', () => {
  test('login answers the contract shape; /me lists the memberships', async () => {
    const tk = tokens.owner;
    assert.match(tk.access_token, /^rca_/);
    assert.match(tk.refresh_token, /^rcr_/);
    assert.equal((tk as unknown as { token_type: string }).token_type, 'Bearer');
    assert.ok(tk.access_expires_in > 0 && tk.access_expires_in <= 900);
    const me = await call('GET', '/me', 'owner');
    assert.equal(me.statusCode, 200, me.body);
    const body = json<{ user: { email: string }; memberships: Array<{ org: { id: string; name: string }; role: string }> }>(me);
    assert.equal(body.user.email, 'owner@example.com');
    assert.deepEqual(body.memberships, [{ org: { id: seed.orgId, name: seed.orgName }, role: 'owner' }]);
  });

  test('e-mail is case-insensitive; a wrong password and an unknown e-mail answer alike', async () => {
    await login(t.app, 'OWNER@Example.com');
    const wrong = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email: 'viewer@example.com', password: 'not the password' } });
    const unknown = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email: 'nobody@example.com', password: 'not the password' } });
    assertError(wrong, 401, 'INVALID_CREDENTIALS');
    assert.equal(unknown.body, wrong.body);
  });

  test('no route accepts an x-api-key', async () => {
    for (const url of ['/me', `/orgs/${seed.orgId}`, `/orgs/${seed.orgId}/keys`]) {
      const res = await t.app.inject({ method: 'GET', url: `${API}${url}`, headers: { 'x-api-key': seed.key } });
      assertError(res, 401, 'UNAUTHENTICATED');
    }
  });

  test('refresh rotates; replaying a spent refresh token after its grace revokes the whole session', async () => {
    const first = await login(t.app, 'member@example.com');
    const r1 = await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: first.refresh_token } });
    assert.equal(r1.statusCode, 200, r1.body);
    const second = json<Tokens>(r1);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(second) })).statusCode, 200);

    await agePastGrace(t.db, first.refresh_token); // a concurrent refresh within the grace is test/console/session-lifetime.test.ts's
    const replay = await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: first.refresh_token } });
    assertError(replay, 401, 'REFRESH_REUSED');
    // the family is gone: the legitimate holder's newer tokens stop working too
    assertError(await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(second) }), 401, 'UNAUTHENTICATED');
    assertError(await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: second.refresh_token } }), 401, 'UNAUTHENTICATED');
    const row = await t.db('console_sessions').where({ user_id: ids.member }).whereNotNull('revoked_at').first();
    assert.equal(row?.revoked_reason, 'refresh_reused');
  });

  test('logout revokes; sessions are listed and revocable by their owner only', async () => {
    const a = await login(t.app, 'viewer@example.com');
    const b = await login(t.app, 'viewer@example.com');
    const list = await t.app.inject({ method: 'GET', url: `${API}/sessions`, headers: bearer(a) });
    const sessions = json<{ sessions: Array<{ id: string; current: boolean }> }>(list).sessions;
    assert.ok(sessions.length >= 3);
    assert.equal(sessions.filter((s) => s.current).length, 1);
    const other = sessions.find((s) => !s.current)!;
    assertError(await t.app.inject({ method: 'DELETE', url: `${API}/sessions/${other.id}`, headers: bearer(tokens.admin) }), 404, 'NOT_FOUND');

    const bSession = await t.db('console_tokens').where({ token_hash: (await import('../../src/store/sessions.js')).hashToken(b.access_token) }).first('session_id');
    assert.equal((await t.app.inject({ method: 'DELETE', url: `${API}/sessions/${bSession.session_id}`, headers: bearer(a) })).statusCode, 204);
    assertError(await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(b) }), 401, 'UNAUTHENTICATED');

    assert.equal((await t.app.inject({ method: 'POST', url: `${API}/auth/logout`, headers: bearer(a) })).statusCode, 204);
    assertError(await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(a) }), 401, 'UNAUTHENTICATED');
    assertError(await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: a.refresh_token } }), 401, 'UNAUTHENTICATED');
  });
});

describe('browser sessions: cookies and CSRF', () => {
  test('cookie login sets HttpOnly SameSite cookies, no tokens in the body; unsafe methods need x-csrf-token', async () => {
    // a CSRF cookie planted before sign-in is replaced, never adopted
    const res = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, cookies: { rc_csrf: 'planted-by-someone' }, payload: { email: 'member@example.com', password: PASSWORD } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).access_token, undefined);
    const cookies = Object.fromEntries(res.cookies.map((c) => [c.name, c]));
    assert.equal(cookies.rc_access.httpOnly, true);
    assert.equal(cookies.rc_access.sameSite, 'Strict');
    assert.equal(cookies.rc_refresh.path, '/console/api/v1/auth');
    assert.equal(cookies.rc_csrf.httpOnly, undefined);
    assert.notEqual(cookies.rc_csrf.value, 'planted-by-someone');
    const jar = { rc_access: cookies.rc_access.value, rc_csrf: cookies.rc_csrf.value };

    assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: jar })).statusCode, 200);
    const body = { name: 'csrf', classes: ['*'] };
    assertError(await t.app.inject({ method: 'POST', url: `${API}/orgs/${seed.orgId}/keys`, cookies: jar, payload: body }), 403, 'CSRF_FAILED');
    assertError(await t.app.inject({ method: 'POST', url: `${API}/orgs/${seed.orgId}/keys`, cookies: jar, headers: { 'x-csrf-token': 'x'.repeat(32) }, payload: body }), 403, 'CSRF_FAILED');
    const ok = await t.app.inject({ method: 'POST', url: `${API}/orgs/${seed.orgId}/keys`, cookies: jar, headers: { 'x-csrf-token': jar.rc_csrf }, payload: body });
    assert.equal(ok.statusCode, 201, ok.body);

    // refresh by cookie: CSRF too, then new cookies
    const refreshJar = { rc_refresh: cookies.rc_refresh.value, rc_csrf: jar.rc_csrf };
    assertError(await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, cookies: refreshJar, payload: {} }), 403, 'CSRF_FAILED');
    const r = await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, cookies: refreshJar, headers: { 'x-csrf-token': jar.rc_csrf }, payload: {} });
    assert.equal(r.statusCode, 200, r.body);
    assert.notEqual(r.cookies.find((c) => c.name === 'rc_refresh')?.value, cookies.rc_refresh.value);
  });

  test('console responses carry CSP, frame-ancestors and nosniff', async () => {
    const res = await call('GET', '/me', 'owner');
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['cache-control'], 'no-store');
  });
});

describe('roles', () => {
  test('every organisation route enforces its least role; outsiders see 404', async () => {
    const org = seed.orgId;
    const key = seed.id;
    const routes: Array<{ method: string; url: string; least: 'viewer' | 'member' | 'admin'; payload?: object }> = [
      { method: 'GET', url: `/orgs/${org}`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/keys`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/keys/${key}`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/usage`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/keys/${key}/requests`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/feedback`, least: 'viewer' },
      { method: 'GET', url: `/orgs/${org}/members`, least: 'viewer' },
      { method: 'POST', url: `/orgs/${org}/keys`, least: 'member', payload: { name: 'role test', classes: ['person'] } },
      { method: 'PATCH', url: `/orgs/${org}/keys/${key}`, least: 'member', payload: { description: 'by role test' } },
      { method: 'POST', url: `/orgs/${org}/keys/${key}/suspend`, least: 'member' },
      { method: 'POST', url: `/orgs/${org}/keys/${key}/resume`, least: 'member' },
      { method: 'POST', url: `/orgs/${org}/members`, least: 'admin', payload: { email: `new-${Date.now()}@example.com`, role: 'viewer' } },
      { method: 'PATCH', url: `/orgs/${org}/members/${ids.viewer}`, least: 'admin', payload: { role: 'viewer' } },
      { method: 'GET', url: `/orgs/${org}/audit`, least: 'admin' },
    ];
    const rank = { viewer: 0, member: 1, admin: 2, owner: 3 };
    for (const r of routes) {
      for (const who of ['viewer', 'member', 'admin', 'owner'] as const) {
        const payload = r.payload && 'email' in r.payload ? { ...r.payload, email: `${who}-${r.payload.email as string}` } : r.payload;
        const res = await call(r.method, r.url, who, payload);
        if (rank[who] < rank[r.least]) assertError(res, 403, 'FORBIDDEN_ROLE');
        else assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${who} ${r.method} ${r.url}: ${res.statusCode} ${res.body}`);
      }
      assertError(await call(r.method, r.url, 'outsider', r.payload), 404, 'NOT_FOUND');
      assertError(await call(r.method, r.url, null, r.payload), 401, 'UNAUTHENTICATED');
    }
  });

  test('admins cannot touch owners; the last owner cannot be removed or demoted', async () => {
    const org = seed.orgId;
    assertError(await call('PATCH', `/orgs/${org}/members/${ids.owner}`, 'admin', { role: 'member' }), 403, 'FORBIDDEN_ROLE');
    assertError(await call('POST', `/orgs/${org}/members`, 'admin', { email: 'wannabe@example.com', role: 'owner' }), 403, 'FORBIDDEN_ROLE');
    assertError(await call('DELETE', `/orgs/${org}/members/${ids.owner}`, 'owner'), 409, 'CONFLICT');
    assertError(await call('PATCH', `/orgs/${org}/members/${ids.owner}`, 'owner', { role: 'admin' }), 409, 'CONFLICT');
    // with a second owner, the first may step down
    assert.equal((await call('PATCH', `/orgs/${org}/members/${ids.admin}`, 'owner', { role: 'owner' })).statusCode, 200);
    assert.equal((await call('PATCH', `/orgs/${org}/members/${ids.admin}`, 'owner', { role: 'admin' })).statusCode, 200);
  });
});

describe('keys', () => {
  test('create shows the secret once; edit, suspend (API 403), resume, revoke (final); each step audited', async () => {
    const org = seed.orgName;
    const created = await call('POST', `/orgs/${org}/keys`, 'member', { name: 'web', classes: ['person', 'dog'], monthly_quota: 500, rate_limit_per_minute: 30 });
    assert.equal(created.statusCode, 201, created.body);
    const { key, secret } = json<{ key: Record<string, unknown> & { id: string }; secret: string }>(created);
    assert.match(secret, /^cvk_/);
    assert.deepEqual(
      { status: key.status, classes: key.classes, monthly_quota: key.monthly_quota, rate_limit_per_minute: key.rate_limit_per_minute, used_this_month: key.used_this_month },
      { status: 'active', classes: ['person', 'dog'], monthly_quota: 500, rate_limit_per_minute: 30, used_this_month: 0 },
    );
    assert.ok(secret.startsWith(key.prefix as string));
    const list = await call('GET', `/orgs/${org}/keys`, 'viewer');
    assert.ok(!list.body.includes(secret), 'the secret never appears again');

    assertError(await call('POST', `/orgs/${org}/keys`, 'member', { name: 'x', classes: ['unicorn'] }), 400, 'VALIDATION_FAILED');
    assertError(await call('POST', `/orgs/${org}/keys`, 'member', { name: 'x', classes: ['*'], surprise: 1 }), 400, 'VALIDATION_FAILED');

    const patched = await call('PATCH', `/orgs/${org}/keys/${key.id}`, 'member', { name: 'web-2', expires_at: '2031-01-01T00:00:00Z', rate_limit_per_minute: null });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(json<{ key: { name: string; expires_at: string } }>(patched).key.expires_at, '2031-01-01T00:00:00.000Z');

    assert.equal((await call('POST', `/orgs/${org}/keys/${key.id}/suspend`, 'member')).statusCode, 200);
    const sync = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': secret }, payload: { external_id: 's', image_url: 'http://127.0.0.1:9/x.png' } });
    assertError(sync, 403, 'KEY_SUSPENDED');
    assert.equal((await call('POST', `/orgs/${org}/keys/${key.id}/resume`, 'member')).statusCode, 200);
    const revoked = await call('POST', `/orgs/${org}/keys/${key.id}/revoke`, 'admin');
    assert.equal(json<{ key: { status: string } }>(revoked).key.status, 'revoked');
    assertError(await call('POST', `/orgs/${org}/keys/${key.id}/resume`, 'owner'), 409, 'CONFLICT');
    assertError(await call('PATCH', `/orgs/${org}/keys/${key.id}`, 'owner', { name: 'again' }), 409, 'CONFLICT');

    const audit = json<{ entries: Array<{ action: string; actor: { email: string }; target: { id: string }; ip: string }> }>(await call('GET', `/orgs/${org}/audit?limit=1000`, 'admin'));
    const mine = audit.entries.filter((e) => e.target.id === key.id).map((e) => `${e.action} by ${e.actor.email}`).reverse();
    assert.deepEqual(mine, ['key.create by member@example.com', 'key.update by member@example.com', 'key.suspend by member@example.com', 'key.resume by member@example.com', 'key.revoke by admin@example.com']);
    assert.ok(audit.entries.every((e) => typeof e.ip === 'string' && e.ip.length > 0));
    assert.ok(audit.entries.some((e) => e.action === 'invitation.create'));
  });

  test('a key of another organisation is not found', async () => {
    const other = await t.newKey();
    assertError(await call('GET', `/orgs/${seed.orgId}/keys/${other.id}`, 'owner'), 404, 'NOT_FOUND');
    assertError(await call('POST', `/orgs/${seed.orgId}/keys/${other.id}/revoke`, 'owner'), 404, 'NOT_FOUND');
  });
});

describe('usage, requests, feedback', () => {
  test('a DONE request and a refused call appear per day; the request comes with results, image link and rating', async () => {
    const created = json<{ key: { id: string }; secret: string }>(await call('POST', `/orgs/${seed.orgId}/keys`, 'member', { name: 'usage', classes: ['*'], rate_limit_per_minute: 1 }));
    const image = readFixture('basketball1.png').toString('base64');
    const first = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': created.secret }, payload: { external_id: 'u1', image_base64: image } });
    assert.equal(first.statusCode, 200, first.body);
    const second = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': created.secret }, payload: { external_id: 'u2', image_base64: image } });
    assertError(second, 429, 'RATE_LIMITED');
    const requestId = json<{ request_id: string }>(first).request_id;
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': created.secret }, payload: { request_id: requestId, rating: 1 } })).statusCode, 200);

    const usage = json<{ days: Array<{ date: string; done: number; error: number; refused: number }>; quota: { used: number; limit: number }; balance: number | null }>(
      await call('GET', `/orgs/${seed.orgId}/usage?days=7&key_id=${created.key.id}`, 'viewer'),
    );
    assert.equal(usage.days.length, 7);
    const today = usage.days.at(-1)!;
    assert.equal(today.date, new Date().toISOString().slice(0, 10));
    assert.deepEqual({ done: today.done, error: today.error, refused: today.refused }, { done: 1, error: 0, refused: 1 });
    assert.equal(usage.quota.used, 1);
    assert.equal(usage.balance, null);

    const requests = json<{ requests: Array<{ id: string; status: string; image_url: string; results: Array<{ label: string }>; feedback: number }> }>(
      await call('GET', `/orgs/${seed.orgId}/keys/${created.key.id}/requests?limit=5`, 'viewer'),
    );
    assert.equal(requests.requests.length, 1);
    const r = requests.requests[0];
    assert.equal(r.id, requestId);
    assert.equal(r.status, 'DONE');
    assert.equal(r.feedback, 1);
    assert.ok(r.results.some((d) => d.label === 'person'), JSON.stringify(r.results));
    const img = await t.app.inject({ method: 'GET', url: new URL(r.image_url).pathname + new URL(r.image_url).search });
    assert.equal(img.statusCode, 200);

    const fb = json<{ by_label: Array<{ label: string; good: number }>; by_day: Array<{ date: string; good: number }> }>(await call('GET', `/orgs/${seed.orgId}/feedback?days=3`, 'viewer'));
    assert.equal(fb.by_label.find((l) => l.label === 'person')?.good, 1);
    assert.equal(fb.by_day.at(-1)?.good, 1);
    assertError(await call('GET', `/orgs/${seed.orgId}/usage?days=9999`, 'viewer'), 400, 'VALIDATION_FAILED');
  });
});

describe('sign-in throttling', () => {
  test('failures lock the account (even for the right password) and the client address, with Retry-After', async () => {
    const app = await buildApp(
      { ...t.services, console: { throttle: { account: { slowAfter: 3, lockAfter: 3, lockSeconds: 600, windowSeconds: 600 }, address: { slowAfter: 5, lockAfter: 5, lockSeconds: 600, windowSeconds: 600 } } } },
      { logger: false, sweepAbandoned: false },
    );
    try {
      await consoleUser(t.db, 'locked@example.com');
      const attempt = (email: string, password: string, ip = '10.0.0.1') =>
        app.inject({ method: 'POST', url: `${API}/auth/login`, remoteAddress: ip, payload: { email, password } });
      for (let i = 0; i < 3; i++) assertError(await attempt('locked@example.com', 'wrong password!'), 401, 'INVALID_CREDENTIALS');
      const locked = await attempt('locked@example.com', PASSWORD, '10.0.0.2');
      assertError(locked, 429, 'LOGIN_THROTTLED');
      assert.ok(Number(locked.headers['retry-after']) > 500);
      // an unknown e-mail is throttled the same way: the answer never tells which exist
      for (let i = 0; i < 3; i++) assertError(await attempt('ghost@example.com', 'wrong password!', '10.0.0.3'), 401, 'INVALID_CREDENTIALS');
      assertError(await attempt('ghost@example.com', 'wrong password!', '10.0.0.4'), 429, 'LOGIN_THROTTLED');
      // the address: 5 failures over different accounts lock it for every account
      for (let i = 0; i < 5; i++) await attempt(`spray${i}@example.com`, 'wrong password!', '10.0.0.9');
      assertError(await attempt('owner@example.com', PASSWORD, '10.0.0.9'), 429, 'LOGIN_THROTTLED');
      assert.equal((await attempt('owner@example.com', PASSWORD, '10.0.0.10')).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});

test('the console API is in /openapi.json under its own tag', async () => {
  const doc = json<{ paths: Record<string, Record<string, { tags?: string[] }>>; tags: Array<{ name: string }> }>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  assert.ok(doc.tags.some((x) => x.name === 'Console'));
  for (const p of ['/console/api/v1/auth/login', '/console/api/v1/auth/refresh', '/console/api/v1/orgs/{org}/keys', '/console/api/v1/orgs/{org}/audit']) {
    assert.ok(doc.paths[p], `${p} documented`);
    assert.ok(Object.values(doc.paths[p]).every((op) => op.tags?.includes('Console')), p);
  }
});
