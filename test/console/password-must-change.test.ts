/**
 * Temporary passwords (issue 29), on real PostgreSQL over real HTTP: a password an operator
 * chose (`recog users create`, `recog users set-password`) opens a session that can only read
 * /me, change the password and sign out; every other route answers 403
 * PASSWORD_CHANGE_REQUIRED until the owner has chosen their own. A password the owner chose
 * (accepting an invitation) is not temporary.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { usersCreate, usersSetPassword } from '../../src/cli/commands/users.js';
import { CLI_ACTOR } from '../../src/store/audit.js';
import { createInvitation } from '../../src/store/invitations.js';
import { createOrg } from '../../src/store/orgs.js';
import { findUserByEmail } from '../../src/store/users.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { API, type Tokens } from '../helpers/console.js';

let t: TestApp;
let base: string;
let orgId: string;

const TEMPORARY = 'an operator chose this one';
const OWN = 'my very own passphrase';

before(async () => {
  t = await buildTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  orgId = (await createOrg(t.db, { name: 'must-change-org' })).id;
});
after(async () => {
  await t?.close();
});

async function call(method: string, url: string, token?: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${API}${url}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function signIn(email: string, password: string): Promise<Tokens> {
  const res = await call('POST', '/auth/login', undefined, { email, password });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as unknown as Tokens;
}

function assertRestricted(res: { status: number; body: Record<string, unknown> }, what: string): void {
  assert.equal(res.status, 403, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error_code, 'PASSWORD_CHANGE_REQUIRED', what);
}

test('an operator-created account must choose its own password before anything else; set-password makes it temporary again', async () => {
  const email = 'temp-owner@example.com';
  await usersCreate(t.db, { email, org: orgId, role: 'owner' }, () => Promise.resolve(TEMPORARY));
  assert.equal((await findUserByEmail(t.db, email))!.password_must_change, true);

  const temp = await signIn(email, TEMPORARY);
  const me = await call('GET', '/me', temp.access_token);
  assert.equal(me.status, 200, JSON.stringify(me.body));
  assert.equal(me.body.password_must_change, true);
  assertRestricted(await call('GET', `/orgs/${orgId}/keys`, temp.access_token), 'an organisation route');
  assertRestricted(await call('POST', `/orgs/${orgId}/keys`, temp.access_token, { name: 'too early', classes: ['*'] }), 'creating a key');
  assertRestricted(await call('GET', '/sessions', temp.access_token), 'the session list');
  assertRestricted(await call('GET', '/me/mfa', temp.access_token), 'second-factor setup');
  assert.equal(Number((await t.db('api_keys').where({ org_id: orgId }).count<Array<{ count: string | number }>>('* as count'))[0].count), 0, 'no key was created');

  const changed = await call('POST', '/me/password', temp.access_token, { current_password: TEMPORARY, new_password: OWN });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  const fresh = changed.body as unknown as Tokens;
  assert.equal((await findUserByEmail(t.db, email))!.password_must_change, false, 'cleared with the change');
  assert.equal((await call('GET', '/me', fresh.access_token)).body.password_must_change, false);
  assert.equal((await call('GET', `/orgs/${orgId}/keys`, fresh.access_token)).status, 200);
  const key = await call('POST', `/orgs/${orgId}/keys`, fresh.access_token, { name: 'now allowed', classes: ['*'] });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  assert.equal((await call('GET', '/me', temp.access_token)).status, 401, 'the restricted session ended with the change');

  // The operator resets the password: temporary again, restricted again after signing in.
  await usersSetPassword(t.db, email, () => Promise.resolve('another operator pick'));
  assert.equal((await findUserByEmail(t.db, email))!.password_must_change, true);
  assert.equal((await call('GET', '/me', fresh.access_token)).status, 401, 'the reset ended every session');
  const again = await signIn(email, 'another operator pick');
  assertRestricted(await call('GET', `/orgs/${orgId}/keys`, again.access_token), 'after set-password');
  assert.equal((await call('POST', '/auth/logout', again.access_token)).status, 204, 'signing out stays open');
});

test('an invited user who chose their own password is not restricted', async () => {
  const email = 'invited-own@example.com';
  const { token } = await createInvitation(t.db, { orgId, email, role: 'member', inviter: CLI_ACTOR });
  const accepted = await call('POST', '/invitations/accept', undefined, { token, new_password: OWN });
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  assert.equal((await findUserByEmail(t.db, email))!.password_must_change, false);
  const tokens = await signIn(email, OWN);
  assert.equal((await call('GET', '/me', tokens.access_token)).body.password_must_change, false);
  assert.equal((await call('GET', `/orgs/${orgId}/keys`, tokens.access_token)).status, 200);
});
