/**
 * Console session lifetimes and concurrent refreshes (issue 29), on real PostgreSQL over real
 * HTTP: a session ends after its idle timeout and at its absolute lifetime from sign-in
 * (clocks are moved by setting `last_used_at` / `created_at` in the past, never by sleeping);
 * two refreshes of one token at the same moment (two browser tabs) both succeed with the
 * same pair and the session lives on; a spent token presented after its grace, or an older
 * one, is reuse and revokes the session.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { hashToken, REFRESH_GRACE_SECONDS } from '../../src/store/sessions.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { agePastGrace, API, consoleUser, PASSWORD, type Tokens } from '../helpers/console.js';

const IDLE = 600;
const LIFETIME = 2 * 3600;

let t: TestApp;
let base: string;

before(async () => {
  t = await buildTestApp({ CONSOLE_SESSION_IDLE_SECONDS: String(IDLE), CONSOLE_SESSION_TTL_SECONDS: String(LIFETIME), CONSOLE_ACCESS_TTL_SECONDS: '900' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await t?.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
  setCookies: string[];
}

async function call(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const res = await fetch(`${base}${API}${path}`, {
    method,
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, setCookies: res.headers.getSetCookie() };
}

const signIn = async (email: string): Promise<Tokens> => {
  const res = await call('POST', '/auth/login', { body: { email, password: PASSWORD } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as unknown as Tokens;
};
const refresh = (token: string) => call('POST', '/auth/refresh', { body: { refresh_token: token } });
const me = (tokens: { access_token: string }) => call('GET', '/me', { headers: { authorization: `Bearer ${tokens.access_token}` } });
async function sessionOf(tokens: { refresh_token: string }): Promise<string> {
  const row = await t.db('console_tokens').where({ token_hash: hashToken(tokens.refresh_token) }).first<{ session_id: string } | undefined>('session_id');
  assert.ok(row, 'the refresh token is stored');
  return row.session_id;
}
const sessionRow = (id: string) =>
  t.db('console_sessions').where({ id }).first<{ revoked_at: Date | null; revoked_reason: string | null; last_used_at: Date; created_at: Date } | undefined>();
/** Moves the session's columns `seconds` into the past (now() of the database). */
const ago = (seconds: number) => t.db.raw('now() - make_interval(secs => ?)', [seconds]);

function assertRefused(res: Answer, code: string, message?: RegExp): void {
  assert.equal(res.status, 401, JSON.stringify(res.body));
  assert.equal(res.body.error_code, code, JSON.stringify(res.body));
  if (message) assert.match(String(res.body.message), message);
}

test('an access token never outlives the idle timeout; the refresh token lives to the absolute end', async () => {
  await consoleUser(t.db, 'ttl@example.com');
  const tokens = await signIn('ttl@example.com');
  assert.ok(tokens.access_expires_in <= IDLE && tokens.access_expires_in >= IDLE - 5, `access_expires_in ${tokens.access_expires_in}`);
  assert.ok(tokens.refresh_expires_in <= LIFETIME && tokens.refresh_expires_in >= LIFETIME - 5, `refresh_expires_in ${tokens.refresh_expires_in}`);
});

test('idle expiry: no activity for the idle timeout ends the session (401 saying so, revoked, no longer listed)', async () => {
  await consoleUser(t.db, 'idle@example.com');
  const other = await signIn('idle@example.com');
  const tokens = await signIn('idle@example.com');
  const id = await sessionOf(tokens);

  // just inside the idle timeout: the refresh works and counts as activity
  await t.db('console_sessions').where({ id }).update({ last_used_at: ago(IDLE - 30) });
  const fresh = await refresh(tokens.refresh_token);
  assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
  const row = await sessionRow(id);
  assert.ok(row && Date.now() - row.last_used_at.getTime() < 60_000, 'the refresh recorded activity');

  // past it: refused, and the session is over for good
  await t.db('console_sessions').where({ id }).update({ last_used_at: ago(IDLE + 1) });
  const listedBefore = await call('GET', '/sessions', { headers: { authorization: `Bearer ${other.access_token}` } });
  assert.ok(!(listedBefore.body.sessions as Array<{ id: string }>).some((s) => s.id === id), 'an idle session is not listed as live');
  const next = fresh.body as unknown as Tokens;
  assertRefused(await refresh(next.refresh_token), 'UNAUTHENTICATED', /ended after 10 minutes without activity/);
  assert.equal((await sessionRow(id))?.revoked_reason, 'idle_timeout');
  assertRefused(await me(next), 'UNAUTHENTICATED');
  assertRefused(await refresh(next.refresh_token), 'UNAUTHENTICATED');
  assert.equal((await me(other)).status, 200, 'other sessions of the user are untouched');
});

test('absolute expiry: refreshing never extends a session past sign-in + the lifetime', async () => {
  await consoleUser(t.db, 'absolute@example.com');
  const tokens = await signIn('absolute@example.com');
  const id = await sessionOf(tokens);

  // active all along (last used just now), but signed in almost the whole lifetime ago
  await t.db('console_sessions').where({ id }).update({ created_at: ago(LIFETIME - 100) });
  const late = await refresh(tokens.refresh_token);
  assert.equal(late.status, 200, JSON.stringify(late.body));
  const pair = late.body as unknown as Tokens;
  assert.ok(pair.refresh_expires_in <= 100, `refresh_expires_in ${pair.refresh_expires_in}: not extended by the refresh`);
  assert.ok(pair.access_expires_in <= 100, `access_expires_in ${pair.access_expires_in}: not past the session's end`);

  await t.db('console_sessions').where({ id }).update({ created_at: ago(LIFETIME + 1) });
  assertRefused(await refresh(pair.refresh_token), 'UNAUTHENTICATED', /sessions last at most 2 hours from sign-in/);
  assert.equal((await sessionRow(id))?.revoked_at, null, 'an expired session is not reuse: nothing to revoke');
});

test('a session signed in under a longer lifetime (stored expires_at 30 days out) ends at the lifetime configured now', async () => {
  await consoleUser(t.db, 'legacy@example.com');
  const tokens = await signIn('legacy@example.com');
  const id = await sessionOf(tokens);
  await t.db('console_sessions').where({ id }).update({ created_at: ago(LIFETIME + 60), expires_at: t.db.raw(`now() + interval '29 days'`) });
  assertRefused(await refresh(tokens.refresh_token), 'UNAUTHENTICATED', /at most 2 hours/);
});

test('two refreshes of one token at the same moment both succeed with the same pair, and the session lives on', async () => {
  await consoleUser(t.db, 'tabs@example.com');
  let tokens = await signIn('tabs@example.com');
  const id = await sessionOf(tokens);
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token), refresh(tokens.refresh_token)]);
    for (const a of answers) assert.equal(a.status, 200, `round ${round}: ${JSON.stringify(a.body)}`);
    const pairs = answers.map((a) => a.body as unknown as Tokens);
    assert.equal(new Set(pairs.map((p) => p.refresh_token)).size, 1, 'the same refresh token for every caller');
    assert.equal(new Set(pairs.map((p) => p.access_token)).size, 1, 'the same access token for every caller');
    assert.notEqual(pairs[0].refresh_token, tokens.refresh_token);
    tokens = pairs[0];
    assert.equal((await me(tokens)).status, 200);
  }
  // a retry of the last exchange a moment later (a lost answer) gets that same pair too
  const previous = tokens;
  const next = await refresh(previous.refresh_token);
  assert.equal(next.status, 200);
  const retried = await refresh(previous.refresh_token);
  assert.equal(retried.status, 200, JSON.stringify(retried.body));
  assert.deepEqual([retried.body.refresh_token, retried.body.access_token], [next.body.refresh_token, next.body.access_token]);
  assert.equal((await sessionRow(id))?.revoked_at, null, 'the session survives');
  assert.equal((await refresh(String(next.body.refresh_token))).status, 200, 'and the shared pair goes on working');
  // the database holds no live token in the clear: the successor is sealed with a key from the spent token
  const sealed = await t.db('console_tokens').where({ session_id: id }).whereNotNull('successor').select<Array<{ successor: string }>>('successor');
  assert.equal(sealed.length, 1, 'only the newest spent token keeps its successor');
  assert.ok(!sealed[0].successor.includes('rcr_') && !sealed[0].successor.includes('rca_'));
});

test('browser cookies: two tabs refreshing at once both get the same new cookies and stay signed in', async () => {
  await consoleUser(t.db, 'cookietabs@example.com');
  const login = await call('POST', '/auth/login', { body: { email: 'cookietabs@example.com', password: PASSWORD }, headers: { 'x-console-session': 'cookie' } });
  assert.equal(login.status, 200);
  const jar = Object.fromEntries(login.setCookies.map((c) => c.split(';')[0].split('=') as [string, string]));
  const cookieRefresh = () =>
    fetch(`${base}${API}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': jar.rc_csrf, cookie: `rc_refresh=${jar.rc_refresh}; rc_csrf=${jar.rc_csrf}` },
      body: '{}',
    });
  const [a, b] = await Promise.all([cookieRefresh(), cookieRefresh()]);
  assert.deepEqual([a.status, b.status], [200, 200]);
  const refreshCookie = (r: Response) => r.headers.getSetCookie().find((c) => c.startsWith('rc_refresh='))?.split(';')[0];
  assert.ok(refreshCookie(a));
  assert.equal(refreshCookie(a), refreshCookie(b));
  assert.notEqual(refreshCookie(a), `rc_refresh=${jar.rc_refresh}`);
});

test('reuse after the grace revokes the family; so does presenting an older token within it', async () => {
  await consoleUser(t.db, 'reuse@example.com');
  const first = await signIn('reuse@example.com');
  const second = (await refresh(first.refresh_token)).body as unknown as Tokens;
  await agePastGrace(t.db, first.refresh_token);
  assertRefused(await refresh(first.refresh_token), 'REFRESH_REUSED');
  const id = await t.db('console_sessions').where({ revoked_reason: 'refresh_reused' }).pluck('id');
  assert.equal(id.length, 1);
  assertRefused(await me(second), 'UNAUTHENTICATED');
  assertRefused(await refresh(second.refresh_token), 'UNAUTHENTICATED');

  // within the grace by the clock, but no longer the newest exchange: real reuse
  const a = await signIn('reuse@example.com');
  const b = (await refresh(a.refresh_token)).body as unknown as Tokens;
  const c = (await refresh(b.refresh_token)).body as unknown as Tokens;
  assertRefused(await refresh(a.refresh_token), 'REFRESH_REUSED');
  assertRefused(await me(c), 'UNAUTHENTICATED');
  assert.ok(REFRESH_GRACE_SECONDS >= 10 && REFRESH_GRACE_SECONDS <= 30);
});
