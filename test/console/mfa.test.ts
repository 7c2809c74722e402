/**
 * The second factor (issue 29), over real HTTP on real PostgreSQL: TOTP enrollment and
 * sign-in with codes computed from the secret under a clock the test drives, recovery codes
 * that work once, replayed codes refused, wrong codes throttled, organisations that require
 * a second factor, the fresh check before creating keys, and turning it off.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ConsoleClient, MfaRequiredError } from '@recognition-service/client';
import { usersResetMfa } from '../../src/cli/commands/users.js';
import { totpCode } from '../../src/console/totp.js';
import { createInvitation } from '../../src/store/invitations.js';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

let t: TestApp;
let now = Date.parse('2026-11-25T12:00:00Z');
/** The next 30-second step: a new code (one already accepted is never accepted again). */
const tick = () => (now += 30_000);

before(async () => {
  t = await buildTestApp({}, { console: { clock: () => now, throttle: { account: { slowAfter: 3, lockAfter: 4, lockSeconds: 900, windowSeconds: 900 }, address: { slowAfter: 500, lockAfter: 1000, lockSeconds: 900, windowSeconds: 900 } } } });
});
after(async () => {
  await t?.close();
});

const post = (url: string, tokens: { access_token: string } | null, payload?: unknown) =>
  t.app.inject({ method: 'POST', url: `${API}${url}`, headers: tokens ? bearer(tokens) : {}, payload: payload as Record<string, unknown> });
const errorCode = (res: { body: string }) => json<{ error_code: string }>(res).error_code;
const actions = async (userId: string) => (await t.db('audit_log').where({ user_id: userId }).orderBy('id').select<Array<{ action: string; details: Record<string, unknown> }>>('action', 'details'));

async function enroll(tokens: Tokens): Promise<{ secret: string; recovery: string[] }> {
  const start = await post('/me/mfa/totp', tokens, { password: PASSWORD });
  assert.equal(start.statusCode, 200, start.body);
  const { secret, otpauth_uri } = json<{ secret: string; otpauth_uri: string }>(start);
  assert.match(secret, /^[A-Z2-7]{32}$/, '160 bits in base32');
  assert.equal(new URL(otpauth_uri).searchParams.get('secret'), secret);
  tick();
  const confirm = await post('/me/mfa/totp/confirm', tokens, { code: totpCode(secret, now) });
  assert.equal(confirm.statusCode, 200, confirm.body);
  return { secret, recovery: json<{ recovery_codes: string[] }>(confirm).recovery_codes };
}

/** Password, then the code: the second step's answer. */
async function signIn(email: string, second: { code?: string; recovery_code?: string }) {
  const first = await post('/auth/login', null, { email, password: PASSWORD });
  assert.equal(first.statusCode, 200, first.body);
  const challenge = json<{ mfa_required?: boolean; mfa_token: string; access_token?: string }>(first);
  assert.equal(challenge.mfa_required, true);
  assert.equal(challenge.access_token, undefined, 'no session before the second factor');
  return { res: await post('/auth/mfa', null, { mfa_token: challenge.mfa_token, ...second }), mfaToken: challenge.mfa_token };
}

test('enrollment, then sign-in with a code from the secret; a challenge and a code work once', async () => {
  const user = await consoleUser(t.db, 'totp-user@example.com');
  const tokens = await login(t.app, user.email);
  const noPassword = await post('/me/mfa/totp', tokens, { password: 'not the password' });
  assert.equal(errorCode(noPassword), 'INVALID_CREDENTIALS', 'a session alone cannot enroll a device');
  const start = json<{ secret: string }>(await post('/me/mfa/totp', tokens, { password: PASSWORD }));
  assert.equal(json<{ totp: string }>(await t.app.inject({ method: 'GET', url: `${API}/me/mfa`, headers: bearer(tokens) })).totp, 'pending');
  // not active until confirmed: a sign-in still gives tokens
  assert.ok((await login(t.app, user.email)).access_token);
  tick();
  const wrong = await post('/me/mfa/totp/confirm', tokens, { code: totpCode(start.secret, now - 120_000) });
  assert.equal(wrong.statusCode, 401, wrong.body);
  assert.equal(errorCode(wrong), 'INVALID_MFA_CODE');
  const code = totpCode(start.secret, now);
  const confirm = await post('/me/mfa/totp/confirm', tokens, { code });
  assert.equal(confirm.statusCode, 200, confirm.body);
  const recovery = json<{ recovery_codes: string[] }>(confirm).recovery_codes;
  assert.equal(recovery.length, 10);
  const stored = await t.db('user_recovery_codes').where({ user_id: user.id }).select('code_hash');
  assert.equal(stored.length, 10);
  assert.ok(stored.every((r: { code_hash: string }) => /^[0-9a-f]{64}$/.test(r.code_hash) && !recovery.some((c) => c.replace('-', '') === r.code_hash)), 'stored as digests');
  const status = json<{ totp: string; recovery_codes_left: number }>(await t.app.inject({ method: 'GET', url: `${API}/me/mfa`, headers: bearer(tokens) }));
  assert.deepEqual([status.totp, status.recovery_codes_left], ['active', 10]);

  // the code accepted at confirmation is not accepted again
  const replay = await signIn(user.email, { code });
  assert.equal(replay.res.statusCode, 401, replay.res.body);
  assert.equal(errorCode(replay.res), 'INVALID_MFA_CODE');
  // the same challenge with the next code opens a session
  tick();
  const next = totpCode(start.secret, now);
  const ok = await post('/auth/mfa', null, { mfa_token: replay.mfaToken, code: next });
  assert.equal(ok.statusCode, 200, ok.body);
  const session = json<Tokens>(ok);
  assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(session) })).statusCode, 200);
  // the challenge is spent; the code is spent
  assert.equal(errorCode(await post('/auth/mfa', null, { mfa_token: replay.mfaToken, code: totpCode(start.secret, now + 30_000) })), 'INVALID_MFA_CODE');
  assert.equal(errorCode((await signIn(user.email, { code: next })).res), 'INVALID_MFA_CODE', 'a code is never accepted twice');
  // a code of the previous step (typed late) is accepted once the step moved on, if newer than the last accepted
  tick();
  const late = totpCode(start.secret, now);
  now += 30_000;
  assert.equal((await signIn(user.email, { code: late })).res.statusCode, 200, 'one step of drift');

  const log = await actions(user.id);
  assert.ok(log.some((e) => e.action === 'user.mfa_enroll'));
  assert.ok(log.some((e) => e.action === 'session.mfa_failed'));
  assert.ok(log.some((e) => e.action === 'session.login' && e.details.mfa === 'totp'));
});

test('an expired challenge opens nothing', async () => {
  const user = await consoleUser(t.db, 'totp-expired@example.com');
  const { secret } = await enroll(await login(t.app, user.email));
  const first = json<{ mfa_token: string }>(await post('/auth/login', null, { email: user.email, password: PASSWORD }));
  await t.db('mfa_challenges').where({ user_id: user.id }).update({ expires_at: t.db.raw(`now() - interval '1 second'`) });
  tick();
  assert.equal(errorCode(await post('/auth/mfa', null, { mfa_token: first.mfa_token, code: totpCode(secret, now) })), 'INVALID_MFA_CODE');
});

test('a recovery code signs in once', async () => {
  const user = await consoleUser(t.db, 'totp-recovery@example.com');
  const { recovery } = await enroll(await login(t.app, user.email));
  const first = await signIn(user.email, { recovery_code: recovery[3].toUpperCase() });
  assert.equal(first.res.statusCode, 200, first.res.body);
  const again = await signIn(user.email, { recovery_code: recovery[3] });
  assert.equal(again.res.statusCode, 401);
  assert.equal(errorCode(again.res), 'INVALID_MFA_CODE');
  const status = json<{ recovery_codes_left: number }>(await t.app.inject({ method: 'GET', url: `${API}/me/mfa`, headers: bearer(json<Tokens>(first.res)) }));
  assert.equal(status.recovery_codes_left, 9);
  const log = await actions(user.id);
  assert.equal(log.filter((e) => e.action === 'user.mfa_recovery_code_used').length, 1);
  assert.ok(log.some((e) => e.action === 'session.login' && e.details.mfa === 'recovery_code'));
});

test('wrong codes are throttled per account, apart from the password, and then even a right code waits', async () => {
  const user = await consoleUser(t.db, 'totp-guesser@example.com');
  const { secret } = await enroll(await login(t.app, user.email));
  const first = json<{ mfa_token: string }>(await post('/auth/login', null, { email: user.email, password: PASSWORD }));
  tick();
  const right = totpCode(secret, now);
  const wrongCode = right === '000000' ? '111111' : '000000';
  for (let i = 0; i < 3; i++) assert.equal(errorCode(await post('/auth/mfa', null, { mfa_token: first.mfa_token, code: wrongCode })), 'INVALID_MFA_CODE', `guess ${i + 1}`);
  const locked = await post('/auth/mfa', null, { mfa_token: first.mfa_token, code: right });
  assert.equal(locked.statusCode, 429, locked.body);
  assert.equal(errorCode(locked), 'LOGIN_THROTTLED');
  assert.ok(Number(locked.headers['retry-after']) >= 1);
  // a right password (which clears the password's failures) gives no new series of guesses
  const second = json<{ mfa_token: string }>(await post('/auth/login', null, { email: user.email, password: PASSWORD }));
  assert.equal((await post('/auth/mfa', null, { mfa_token: second.mfa_token, code: right })).statusCode, 429);
  const log = await actions(user.id);
  assert.equal(log.filter((e) => e.action === 'session.mfa_failed').length, 3);
  assert.ok(log.some((e) => e.action === 'session.login_throttled' && e.details.endpoint === 'auth/mfa'));
});

test('owners require a second factor for their organisation; members without one are refused its routes', async () => {
  const org = await createOrg(t.db, { name: 'mfa-required-org' });
  const owner = await consoleUser(t.db, 'mfa-owner@example.com', [{ orgId: org.id, role: 'owner' }]);
  const member = await consoleUser(t.db, 'mfa-member@example.com', [{ orgId: org.id, role: 'member' }]);
  const outsider = await consoleUser(t.db, 'mfa-outsider@example.com');
  const ownerTokens = await login(t.app, owner.email);
  const memberTokens = await login(t.app, member.email);
  const put = (tokens: Tokens, required: boolean) => t.app.inject({ method: 'PUT', url: `${API}/orgs/${org.name}/mfa`, headers: bearer(tokens), payload: { required } });
  const keys = (tokens: Tokens) => t.app.inject({ method: 'GET', url: `${API}/orgs/${org.name}/keys`, headers: bearer(tokens) });

  assert.equal(errorCode(await put(memberTokens, true)), 'FORBIDDEN_ROLE');
  assert.equal(errorCode(await put(ownerTokens, true)), 'MFA_ENROLLMENT_REQUIRED', 'the owner enrolls first');
  await enroll(ownerTokens);
  const on = await put(ownerTokens, true);
  assert.equal(on.statusCode, 200, on.body);
  assert.equal((await keys(ownerTokens)).statusCode, 200);
  const refused = await keys(memberTokens);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.equal(errorCode(refused), 'MFA_ENROLLMENT_REQUIRED');
  assert.match(json<{ message: string }>(refused).message, /Account page/);
  assert.equal((await t.app.inject({ method: 'GET', url: `${API}/orgs/${org.name}`, headers: bearer(memberTokens) })).statusCode, 403);
  assert.equal((await keys(await login(t.app, outsider.email))).statusCode, 404, 'outsiders still get 404');
  // the member's own account routes still work, so they can enroll
  await enroll(memberTokens);
  assert.equal((await keys(memberTokens)).statusCode, 200);
  assert.equal((await put(ownerTokens, false)).statusCode, 200);
  const entries = await t.db('audit_log').where({ org_id: org.id, action: 'org.mfa_requirement' }).orderBy('id').select<Array<{ details: { from: boolean; to: boolean } }>>('details');
  assert.deepEqual(entries.map((e) => e.details.to), [true, false]);
});

test('creating a key needs a second-factor check within 10 minutes in this session', async () => {
  const org = await createOrg(t.db, { name: 'mfa-fresh-org' });
  const user = await consoleUser(t.db, 'mfa-keys@example.com', [{ orgId: org.id, role: 'member' }]);
  const plain = await consoleUser(t.db, 'no-mfa-keys@example.com', [{ orgId: org.id, role: 'member' }]);
  const create = (tokens: Tokens) => post(`/orgs/${org.id}/keys`, tokens, { name: 'k', classes: ['*'] });
  assert.equal((await create(await login(t.app, plain.email))).statusCode, 201, 'no second factor, no check');

  const { secret } = await enroll(await login(t.app, user.email));
  tick();
  const session = json<Tokens>((await signIn(user.email, { code: totpCode(secret, now) })).res);
  assert.equal((await create(session)).statusCode, 201, 'checked at sign-in');
  await t.db('console_sessions').whereNotNull('mfa_verified_at').whereIn('id', t.db('console_sessions').where({ user_id: user.id }).select('id')).update({ mfa_verified_at: t.db.raw(`now() - interval '11 minutes'`) });
  const stale = await create(session);
  assert.equal(stale.statusCode, 403, stale.body);
  assert.equal(errorCode(stale), 'MFA_CHECK_REQUIRED');
  assert.equal(errorCode(await post('/me/mfa/verify', session, { code: '000000' === totpCode(secret, now + 30_000) ? '111111' : '000000' })), 'INVALID_MFA_CODE');
  tick();
  const verify = await post('/me/mfa/verify', session, { code: totpCode(secret, now) });
  assert.equal(verify.statusCode, 200, verify.body);
  assert.equal((await create(session)).statusCode, 201);
  assert.ok((await actions(user.id)).some((e) => e.action === 'session.mfa_verify'));
});

test('turning it off needs the password and a code or a recovery code', async () => {
  const user = await consoleUser(t.db, 'totp-off@example.com');
  const tokens = await login(t.app, user.email);
  const { recovery } = await enroll(tokens);
  const off = (payload: Record<string, unknown>) => post('/me/mfa/totp/disable', tokens, payload);
  assert.equal(errorCode(await off({ password: 'not the password', recovery_code: recovery[0] })), 'INVALID_CREDENTIALS');
  assert.equal(errorCode(await off({ password: PASSWORD })), 'VALIDATION_FAILED');
  assert.equal(errorCode(await off({ password: PASSWORD, recovery_code: 'aaaaaaaa-aaaaaaaa' })), 'INVALID_MFA_CODE');
  const done = await off({ password: PASSWORD, recovery_code: recovery[0] });
  assert.equal(done.statusCode, 204, done.body);
  assert.ok((await login(t.app, user.email)).access_token, 'a password alone signs in again');
  assert.equal(await t.db('user_recovery_codes').where({ user_id: user.id }).count<{ n: string }>('* as n').first().then((r) => Number(r?.n)), 0);
  assert.ok((await actions(user.id)).some((e) => e.action === 'user.mfa_disable'));
});

test('the SDK over real HTTP: MfaRequiredError without a code provider, a session with one', async () => {
  const user = await consoleUser(t.db, 'totp-sdk@example.com');
  const { secret } = await enroll(await login(t.app, user.email));
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const client = new ConsoleClient({ baseUrl });
  const err = await client.login(user.email, PASSWORD).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof MfaRequiredError, String(err));
  tick();
  assert.equal((await client.completeMfa(err.mfaToken, totpCode(secret, now)))?.email, user.email);
  assert.equal((await client.me()).user.email, user.email);
  const other = new ConsoleClient({ baseUrl });
  tick();
  assert.equal((await other.login(user.email, PASSWORD, { mfaCode: () => totpCode(secret, now) }))?.email, user.email);
  assert.equal((await other.me()).user.email, user.email);
});

test('an operator removes a lost second factor with the server CLI, audited', async () => {
  const user = await consoleUser(t.db, 'totp-lost@example.com');
  await enroll(await login(t.app, user.email));
  assert.deepEqual(await usersResetMfa(t.db, user.email), { user: { id: user.id, email: user.email }, removed: true });
  assert.ok((await login(t.app, user.email)).access_token, 'the password alone signs in');
  assert.equal((await usersResetMfa(t.db, user.email)).removed, false);
  const entries = (await actions(user.id)).filter((e) => e.action === 'user.mfa_disable');
  assert.deepEqual(entries.map((e) => e.details.method), ['operator_reset']);
});

test('an invitation for an account with a second factor is not accepted with the password alone; signed in, it is', async () => {
  const user = await consoleUser(t.db, 'totp-invitee@example.com');
  const { secret } = await enroll(await login(t.app, user.email));
  const org = await createOrg(t.db, { name: `totp-invite-${process.pid}`, balance: null });
  const owner = await consoleUser(t.db, 'totp-inviter@example.com', [{ orgId: org.id, role: 'owner' }]);
  const { token } = await createInvitation(t.db, { orgId: org.id, email: user.email, role: 'viewer', inviter: { id: owner.id, email: owner.email } });
  const refused = await post('/invitations/accept', null, { token, password: PASSWORD });
  assert.equal(refused.statusCode, 403, refused.body);
  assert.equal(errorCode(refused), 'MFA_CHECK_REQUIRED');
  assert.equal(await t.db('memberships').where({ user_id: user.id, org_id: org.id }).first(), undefined, 'not joined');
  tick();
  const signedIn = json<Tokens>((await signIn(user.email, { code: totpCode(secret, now) })).res);
  const accepted = await post('/invitations/accept', signedIn, { token });
  assert.equal(accepted.statusCode, 200, accepted.body);
});
