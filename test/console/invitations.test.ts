/**
 * Invitations instead of chosen passwords (issue 29), on real PostgreSQL through the app:
 * the cross-organisation takeover sequence, answers that never tell whether an e-mail has
 * an account, single use, expiry and revocation, accepting as the right account only,
 * the role rules and the audit entries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

let t: TestApp;
const org: Record<'a' | 'b', { id: string; name: string }> = {} as never;
const tok: Record<'ownerA' | 'adminA' | 'ownerB' | 'adminB', Tokens> = {} as never;

before(async () => {
  t = await buildTestApp();
  for (const k of ['a', 'b'] as const) {
    const o = await createOrg(t.db, { name: `invite-${k}-${Date.now()}` });
    org[k] = { id: o.id, name: o.name };
  }
  await consoleUser(t.db, 'owner-a@a.example', [{ orgId: org.a.id, role: 'owner' }]);
  await consoleUser(t.db, 'admin-a@a.example', [{ orgId: org.a.id, role: 'admin' }]);
  await consoleUser(t.db, 'owner-b@b.example', [{ orgId: org.b.id, role: 'owner' }]);
  await consoleUser(t.db, 'admin-b@b.example', [{ orgId: org.b.id, role: 'admin' }]);
  tok.ownerA = await login(t.app, 'owner-a@a.example');
  tok.adminA = await login(t.app, 'admin-a@a.example');
  tok.ownerB = await login(t.app, 'owner-b@b.example');
  tok.adminB = await login(t.app, 'admin-b@b.example');
});
after(async () => {
  await t?.close();
});

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> };
function post(url: string, payload: object, headers: Record<string, string> = {}): Promise<Answer> {
  return t.app.inject({ method: 'POST', url: `${API}${url}`, headers, payload });
}
function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(json(res).error_code, code, res.body);
}

interface Invited {
  invitation: { id: string; email: string; role: string; invited_by: { id: string | null; email: string }; created_at: string; expires_at: string };
  invitation_url: string;
}
async function invite(who: Tokens, orgId: string, email: string, role = 'member'): Promise<Invited & { token: string }> {
  const res = await post(`/orgs/${orgId}/members`, { email, role }, bearer(who));
  assert.equal(res.statusCode, 201, res.body);
  const body = json<Invited>(res);
  const token = /#\/invite\/(rci_[A-Za-z0-9_-]{43})$/.exec(body.invitation_url)?.[1];
  assert.ok(token, body.invitation_url);
  return { ...body, token };
}
const inspect = (token: string) => post('/invitations/inspect', { token });
const accept = (payload: object, headers: Record<string, string> = {}) => post('/invitations/accept', payload, headers);
const tryLogin = (email: string, password: string) => post('/auth/login', { email, password });
async function orgsOf(tokens: Tokens): Promise<string[]> {
  const me = json<{ memberships: Array<{ org: { name: string } }> }>(await t.app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(tokens) }));
  return me.memberships.map((m) => m.org.name).sort();
}

describe('the cross-organisation takeover of issue 29', () => {
  test('an admin of A can no longer choose a password; nothing A knows opens B; the invitee sets their own password', async () => {
    const cfo = 'CFO@b.example';
    const chosen = 'chosen by the admin of A';
    // the old attack: add the e-mail with a password of A's choosing. Refused by the schema.
    assertError(await post(`/orgs/${org.a.id}/members`, { email: cfo, role: 'viewer', password: chosen }, bearer(tok.adminA)), 400, 'VALIDATION_FAILED');
    assert.equal(await t.db('users').whereRaw('lower(email) = ?', ['cfo@b.example']).first(), undefined, 'no account was created');

    // A invites the e-mail: a link, no account yet
    const fromA = await invite(tok.adminA, org.a.id, cfo, 'viewer');
    assert.equal(await t.db('users').whereRaw('lower(email) = ?', ['cfo@b.example']).first(), undefined, 'an invitation creates no account');
    // B invites the same e-mail, as admin
    const fromB = await invite(tok.ownerB, org.b.id, 'cfo@b.example', 'admin');

    // what the admin of A knows opens nothing in B: not the password they wanted, not A's link
    assertError(await tryLogin(cfo, chosen), 401, 'INVALID_CREDENTIALS');
    const aView = json<{ invitation: Record<string, unknown> }>(await inspect(fromA.token)).invitation;
    assert.deepEqual(aView, { org: { name: org.a.name }, email: 'CFO@b.example', role: 'viewer', invited_by: 'admin-a@a.example', expires_at: fromA.invitation.expires_at, new_account: true });

    // the admin of A uses A's own link, setting a password: that joins A only
    const squat = await accept({ token: fromA.token, new_password: chosen });
    assert.equal(squat.statusCode, 200, squat.body);
    const squatter = await login(t.app, cfo, chosen);
    assert.deepEqual(await orgsOf(squatter), [org.a.name]);
    assertError(await t.app.inject({ method: 'GET', url: `${API}/orgs/${org.b.id}`, headers: bearer(squatter) }), 404, 'NOT_FOUND');
    // ... and A's spent link cannot be turned into B's membership; B's link now needs the account
    assertError(await accept({ token: fromA.token, new_password: chosen }), 404, 'NOT_FOUND');
    assert.equal(json<{ invitation: { new_account: boolean } }>(await inspect(fromB.token)).invitation.new_account, false);
    assertError(await accept({ token: fromB.token, new_password: 'a password for b itself' }), 401, 'UNAUTHENTICATED');
    assert.deepEqual(await orgsOf(squatter), [org.a.name], 'still nothing in B');
  });

  test('the invitee sets their own password via B\'s link and only then can sign in; A\'s link then joins the same account', async () => {
    const email = 'treasurer@b.example';
    const own = 'my very own passphrase';
    const fromA = await invite(tok.adminA, org.a.id, email, 'viewer');
    const fromB = await invite(tok.adminB, org.b.id, email, 'member');
    assertError(await tryLogin(email, own), 401, 'INVALID_CREDENTIALS');
    assertError(await accept({ token: fromB.token }), 400, 'VALIDATION_FAILED'); // a new account needs its password
    assertError(await accept({ token: fromB.token, new_password: 'short' }), 400, 'VALIDATION_FAILED');
    assertError(await accept({ token: fromB.token, new_password: email.toUpperCase() }), 400, 'VALIDATION_FAILED'); // the e-mail itself
    assertError(await accept({ token: fromB.token, new_password: 'password1234' }), 400, 'VALIDATION_FAILED'); // a common password
    const ok = await accept({ token: fromB.token, new_password: own });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(json<{ org: { name: string }; role: string; new_account: boolean }>(ok).role, 'member');
    const me = await login(t.app, email, own);
    assert.deepEqual(await orgsOf(me), [org.b.name]);
    // B's link is spent
    assertError(await inspect(fromB.token), 404, 'NOT_FOUND');
    assertError(await accept({ token: fromB.token, new_password: own }), 404, 'NOT_FOUND');
    // A's link is for an existing account now: accepted by that account's session
    const joined = await accept({ token: fromA.token }, bearer(me));
    assert.equal(joined.statusCode, 200, joined.body);
    assert.deepEqual(await orgsOf(me), [org.a.name, org.b.name].sort());
  });

  test('the answer to an invitation is the same whether or not the e-mail has an account', async () => {
    const existing = await invite(tok.adminA, org.a.id, 'owner-b@b.example', 'viewer');
    const fresh = await invite(tok.adminA, org.a.id, 'nobody-yet@b.example', 'viewer');
    const shape = (i: Invited & { token: string }) => ({
      keys: Object.keys(i).filter((k) => k !== 'token').sort(),
      invitationKeys: Object.keys(i.invitation).sort(),
      role: i.invitation.role,
      inviter: i.invitation.invited_by.email,
      url: i.invitation_url.replace(i.token, 'TOKEN'),
    });
    assert.deepEqual(shape(existing), shape(fresh));
    // and nothing about an account is in it
    for (const i of [existing, fresh]) assert.doesNotMatch(JSON.stringify({ ...i, token: undefined }), /account|exists|new_user|temporary/i);
  });
});

describe('links: single use, expiry, revocation', () => {
  test('used, expired, revoked and unknown tokens are refused alike', async () => {
    const used = await invite(tok.adminA, org.a.id, 'used@a.example');
    assert.equal((await accept({ token: used.token, new_password: PASSWORD })).statusCode, 200);
    const expired = await invite(tok.adminA, org.a.id, 'expired@a.example');
    await t.db('console_invitations').where({ id: expired.invitation.id }).update({ expires_at: new Date(Date.now() - 1000) });
    const revoked = await invite(tok.adminA, org.a.id, 'revoked@a.example');
    assert.equal((await t.app.inject({ method: 'DELETE', url: `${API}/orgs/${org.a.id}/invitations/${revoked.invitation.id}`, headers: bearer(tok.adminA) })).statusCode, 204);
    const unknown = `rci_${'A'.repeat(43)}`;
    const answers: string[] = [];
    for (const token of [used.token, expired.token, revoked.token, unknown, 'not even a token']) {
      const i = await inspect(token);
      assertError(i, 404, 'NOT_FOUND');
      assertError(await accept({ token, new_password: PASSWORD }), 404, 'NOT_FOUND');
      answers.push(i.body);
    }
    assert.equal(new Set(answers).size, 1, 'one answer for every dead link');
    for (const email of ['expired@a.example', 'revoked@a.example']) assert.equal(await t.db('users').where({ email }).first(), undefined);
  });

  test('a second invitation of the same e-mail replaces the first; two concurrent accepts spend a token once', async () => {
    const first = await invite(tok.adminA, org.a.id, 'twice@a.example');
    const second = await invite(tok.adminA, org.a.id, 'twice@a.example', 'viewer');
    assertError(await inspect(first.token), 404, 'NOT_FOUND');
    const both = await Promise.all([accept({ token: second.token, new_password: 'first passphrase!' }), accept({ token: second.token, new_password: 'second passphrase' })]);
    assert.deepEqual(both.map((r) => r.statusCode).sort((x, y) => x - y), [200, 404], both.map((r) => r.body).join(' | '));
    assert.equal(Number((await t.db('users').where({ email: 'twice@a.example' }).count<{ count: string }[]>('* as count'))[0].count), 1);
  });

  test('pending invitations are listed for admins; members are refused; an existing member is not invited again', async () => {
    const p = await invite(tok.adminA, org.a.id, 'pending@a.example', 'viewer');
    const list = await t.app.inject({ method: 'GET', url: `${API}/orgs/${org.a.id}/invitations`, headers: bearer(tok.adminA) });
    assert.equal(list.statusCode, 200, list.body);
    const rows = json<{ invitations: Array<{ id: string; email: string; role: string }> }>(list).invitations;
    assert.ok(rows.some((r) => r.id === p.invitation.id && r.email === 'pending@a.example' && r.role === 'viewer'));
    assert.ok(!rows.some((r) => r.email === 'used@a.example'), 'accepted ones are not pending');
    assert.ok(!JSON.stringify(rows).includes('rci_'), 'no token is ever listed');
    assertError(await post(`/orgs/${org.a.id}/members`, { email: 'ADMIN-A@a.example', role: 'viewer' }, bearer(tok.ownerA)), 409, 'CONFLICT');
    const viewer = await invite(tok.adminA, org.a.id, 'viewer-a@a.example', 'viewer');
    assert.equal((await accept({ token: viewer.token, new_password: PASSWORD })).statusCode, 200);
    const v = await login(t.app, 'viewer-a@a.example');
    assertError(await t.app.inject({ method: 'GET', url: `${API}/orgs/${org.a.id}/invitations`, headers: bearer(v) }), 403, 'FORBIDDEN_ROLE');
    assertError(await post(`/orgs/${org.a.id}/members`, { email: 'x@a.example', role: 'viewer' }, bearer(v)), 403, 'FORBIDDEN_ROLE');
    assertError(await t.app.inject({ method: 'DELETE', url: `${API}/orgs/${org.a.id}/invitations/${p.invitation.id}`, headers: bearer(v) }), 403, 'FORBIDDEN_ROLE');
    // another organisation's admin cannot see or revoke it
    assertError(await t.app.inject({ method: 'DELETE', url: `${API}/orgs/${org.b.id}/invitations/${p.invitation.id}`, headers: bearer(tok.adminB) }), 404, 'NOT_FOUND');
  });

  test('only owners invite owners, and only owners revoke an owner invitation', async () => {
    assertError(await post(`/orgs/${org.a.id}/members`, { email: 'boss@a.example', role: 'owner' }, bearer(tok.adminA)), 403, 'FORBIDDEN_ROLE');
    const boss = await invite(tok.ownerA, org.a.id, 'boss@a.example', 'owner');
    const url = `${API}/orgs/${org.a.id}/invitations/${boss.invitation.id}`;
    assertError(await t.app.inject({ method: 'DELETE', url, headers: bearer(tok.adminA) }), 403, 'FORBIDDEN_ROLE');
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: bearer(tok.ownerA) })).statusCode, 204);
    assertError(await t.app.inject({ method: 'DELETE', url, headers: bearer(tok.ownerA) }), 404, 'NOT_FOUND');
  });
});

describe('accepting as an existing account', () => {
  test('needs that very account: its session or its password; another account or a wrong password is refused', async () => {
    const inv = await invite(tok.adminB, org.b.id, 'owner-a@a.example', 'viewer');
    assert.equal(json<{ invitation: { new_account: boolean } }>(await inspect(inv.token)).invitation.new_account, false);
    assertError(await accept({ token: inv.token }), 401, 'UNAUTHENTICATED');
    assertError(await accept({ token: inv.token }, bearer(tok.adminA)), 401, 'UNAUTHENTICATED'); // signed in, but as someone else
    assertError(await accept({ token: inv.token, password: 'not the password' }), 401, 'INVALID_CREDENTIALS');
    assertError(await accept({ token: inv.token, new_password: 'overwrite the password?' }), 401, 'UNAUTHENTICATED');
    assert.equal((await tryLogin('owner-a@a.example', PASSWORD)).statusCode, 200, 'the password is unchanged');
    const ok = await accept({ token: inv.token, password: PASSWORD });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(await orgsOf(tok.ownerA), [org.a.name, org.b.name].sort());

    // by session, in a browser: cookies need the CSRF header
    const inv2 = await invite(tok.ownerB, org.b.id, 'admin-a@a.example', 'member');
    const res = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'admin-a@a.example', password: PASSWORD } });
    const jar = Object.fromEntries(res.cookies.filter((c) => c.name !== 'rc_refresh').map((c) => [c.name, c.value]));
    assertError(await t.app.inject({ method: 'POST', url: `${API}/invitations/accept`, cookies: jar, payload: { token: inv2.token } }), 403, 'CSRF_FAILED');
    const viaCookie = await t.app.inject({ method: 'POST', url: `${API}/invitations/accept`, cookies: jar, headers: { 'x-csrf-token': jar.rc_csrf }, payload: { token: inv2.token } });
    assert.equal(viaCookie.statusCode, 200, viaCookie.body);
  });
});

test('invite, accept and revoke are in the audit log, by whom', async () => {
  const rows = await t.db('audit_log').where({ org_id: org.a.id }).whereIn('action', ['invitation.create', 'invitation.accept', 'invitation.revoke']).orderBy('id');
  const has = (action: string, actor: string, target: string) => rows.some((r) => r.action === action && r.actor_email === actor && r.target_name === target);
  assert.ok(has('invitation.create', 'admin-a@a.example', 'CFO@b.example'));
  assert.ok(has('invitation.accept', 'CFO@b.example', 'CFO@b.example'));
  assert.ok(has('invitation.revoke', 'admin-a@a.example', 'revoked@a.example'));
  assert.ok(has('invitation.revoke', 'owner-a@a.example', 'boss@a.example'));
  const accepted = rows.find((r) => r.action === 'invitation.accept' && r.target_name === 'CFO@b.example');
  assert.deepEqual({ role: accepted.details.role, new_account: accepted.details.new_account, by: accepted.details.invited_by }, { role: 'viewer', new_account: true, by: 'admin-a@a.example' });
  // the admin API shows them too
  const audit = json<{ entries: Array<{ action: string }> }>(await t.app.inject({ method: 'GET', url: `${API}/orgs/${org.a.id}/audit`, headers: bearer(tok.ownerA) }));
  assert.ok(audit.entries.some((e) => e.action === 'invitation.accept'));
});
