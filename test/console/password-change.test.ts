/**
 * Password changes end sessions (issue 29), on real PostgreSQL: in the same transaction as
 * the change every session is revoked and the caller gets a new one; a session signed in
 * before `password_changed_at` is refused whatever its tokens say; a sign-in whose password
 * check happened before a change that committed meanwhile gets no session.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hashPassword } from '../../src/console/passwords.js';
import { changePassword, hashToken, startSession } from '../../src/store/sessions.js';
import { findUserByEmail } from '../../src/store/users.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

let t: TestApp;
const TTL = { accessSeconds: 600, refreshSeconds: 3600, idleSeconds: 1800 };

before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t?.close();
});

const me = (tokens: { access_token: string }) => t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(tokens) });
const refresh = (tokens: { refresh_token: string }) => t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: tokens.refresh_token } });
const sessionOf = async (tokens: { access_token: string }) => (await t.db('console_tokens').where({ token_hash: hashToken(tokens.access_token) }).first<{ session_id: string } | undefined>('session_id'))?.session_id;

test('a password change ends every other session at once; the caller continues in a new session', async () => {
  await consoleUser(t.db, 'changer@example.com');
  const elsewhere = await login(t.app, 'changer@example.com');
  const cookieLogin = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'changer@example.com', password: PASSWORD } });
  const jar = Object.fromEntries(cookieLogin.cookies.map((c) => [c.name, c.value]));
  const here = await login(t.app, 'changer@example.com');
  const oldHere = await sessionOf(here);

  const wrong = await t.app.inject({ method: 'POST', url: `${API}/me/password`, headers: bearer(here), payload: { current_password: 'not it', new_password: 'a brand new passphrase' } });
  assert.equal(wrong.statusCode, 401, wrong.body);
  assert.equal((await me(elsewhere)).statusCode, 200, 'a refused change ends nothing');

  const res = await t.app.inject({ method: 'POST', url: `${API}/me/password`, headers: bearer(here), payload: { current_password: PASSWORD, new_password: 'a brand new passphrase' } });
  assert.equal(res.statusCode, 200, res.body);
  const fresh = json<Tokens>(res);
  assert.match(fresh.access_token, /^rca_/);
  assert.equal((await me(fresh)).statusCode, 200, 'the caller goes on in its new session');
  assert.notEqual(await sessionOf(fresh), oldHere);

  for (const old of [elsewhere, here]) {
    assert.equal((await me(old)).statusCode, 401);
    assert.equal((await refresh(old)).statusCode, 401);
  }
  assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { rc_access: jar.rc_access } })).statusCode, 401, 'the browser session too');
  const user = (await findUserByEmail(t.db, 'changer@example.com'))!;
  const live = await t.db('console_sessions').where({ user_id: user.id }).whereNull('revoked_at').select('id');
  assert.deepEqual(live.map((r) => r.id), [await sessionOf(fresh)]);
  const reasons = await t.db('console_sessions').where({ user_id: user.id }).whereNotNull('revoked_at').distinct('revoked_reason');
  assert.deepEqual(reasons.map((r) => r.revoked_reason), ['password_changed']);
  // the old password opens nothing any more; the new one does
  assert.equal((await t.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email: 'changer@example.com', password: PASSWORD } })).statusCode, 401);
  await login(t.app, 'changer@example.com', 'a brand new passphrase');
});

test('a browser changing its password gets new cookies and stays signed in', async () => {
  await consoleUser(t.db, 'browser@example.com');
  const res = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'browser@example.com', password: PASSWORD } });
  const jar = Object.fromEntries(res.cookies.map((c) => [c.name, c.value]));
  const change = await t.app.inject({
    method: 'POST',
    url: `${API}/me/password`,
    cookies: { rc_access: jar.rc_access, rc_csrf: jar.rc_csrf },
    headers: { 'x-csrf-token': jar.rc_csrf },
    payload: { current_password: PASSWORD, new_password: 'another new passphrase' },
  });
  assert.equal(change.statusCode, 200, change.body);
  assert.equal(json(change).access_token, undefined, 'cookies, not tokens in the body');
  const next = Object.fromEntries(change.cookies.map((c) => [c.name, c.value]));
  assert.ok(next.rc_access && next.rc_refresh);
  assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { rc_access: next.rc_access } })).statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { rc_access: jar.rc_access } })).statusCode, 401);
});

test('a session signed in before the latest password change is refused, even if its revocation was missed', async () => {
  const u = await consoleUser(t.db, 'stale@example.com');
  const tokens = await login(t.app, 'stale@example.com');
  assert.equal((await me(tokens)).statusCode, 200);
  // a change that (by a bug, or a writer that forgot) did not revoke anything
  await t.db('users').where({ id: u.id }).update({ password_changed_at: t.db.raw(`now() + interval '1 second'`) });
  assert.equal(await t.db('console_sessions').where({ user_id: u.id }).whereNull('revoked_at').count<{ count: string }[]>('* as count').then((r) => Number(r[0].count)), 1, 'still not revoked');
  const res = await me(tokens);
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(json(res).error_code, 'UNAUTHENTICATED');
  assert.equal((await refresh(tokens)).statusCode, 401);
});

test('a sign-in whose password check predates a change that committed meanwhile gets no session', async () => {
  const u = await consoleUser(t.db, 'race@example.com');
  const checked = (await findUserByEmail(t.db, 'race@example.com'))!.password_hash; // the login verified this one
  await changePassword(t.db, u.id, await hashPassword('changed meanwhile!!'), 'password_changed');
  assert.equal(await startSession(t.db, u.id, TTL, {}, checked), null);
  assert.equal(Number((await t.db('console_sessions').where({ user_id: u.id }).count<{ count: string }[]>('* as count'))[0].count), 0);
});

test('a sign-in racing a change in flight waits for it, then gets no session', async () => {
  const u = await consoleUser(t.db, 'inflight@example.com');
  const checked = (await findUserByEmail(t.db, 'inflight@example.com'))!.password_hash;
  const newHash = await hashPassword('changed in flight!!');
  const trx = await t.db.transaction();
  let settled = false;
  let pending: Promise<unknown> | undefined;
  try {
    // the change has written the row (and holds its lock) but not committed
    await trx('users').where({ id: u.id }).update({ password_hash: newHash, password_changed_at: trx.fn.now() });
    pending = startSession(t.db, u.id, TTL, {}, checked).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(settled, false, 'the sign-in waits for the change');
    await trx.commit();
  } catch (err) {
    await trx.rollback();
    throw err;
  }
  assert.equal(await pending, null);
  // and with no change in flight, the same check gives a session
  const ok = await startSession(t.db, u.id, TTL, {}, newHash);
  assert.ok(ok?.accessToken);
});

test('POST /auth/login with the old password, checked while a change is in flight, answers INVALID_CREDENTIALS and starts no session', async () => {
  const u = await consoleUser(t.db, 'route@example.com');
  const newHash = await hashPassword('changed during sign-in');
  const trx = await t.db.transaction();
  let answer: Promise<{ statusCode: number; body: string }> | undefined;
  try {
    await trx('users').where({ id: u.id }).update({ password_hash: newHash, password_changed_at: trx.fn.now() });
    // the route reads the committed (old) hash and verifies the old password against it, then waits on the row lock
    answer = t.app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email: 'route@example.com', password: PASSWORD } });
    await new Promise((r) => setTimeout(r, 1500)); // past the scrypt check
    await trx.commit();
  } catch (err) {
    await trx.rollback();
    throw err;
  }
  const res = await answer;
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(json(res).error_code, 'INVALID_CREDENTIALS');
  assert.equal(Number((await t.db('console_sessions').where({ user_id: u.id }).count<{ count: string }[]>('* as count'))[0].count), 0);
  // a sign-in after the change, with the new password, is not refused as stale
  const tokens = await login(t.app, 'route@example.com', 'changed during sign-in');
  assert.equal((await me(tokens)).statusCode, 200);
});
