/**
 * The audit log of issue 29, on real PostgreSQL through the app: every security event is
 * recorded after its action (sign-ins, failed and throttled ones, sign-outs, password
 * changes, session revocations, refresh-token reuse, refused roles); a change and its entry
 * commit together (a failure forced inside the transaction leaves neither); the filters; the
 * JSON-lines export over real HTTP; and the server CLI's writes, audited as `recog CLI`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { auditList } from '../../src/cli/commands/audit.js';
import { keysCreate, keysSetStatus, keysUpdate, type KeyDeps } from '../../src/cli/commands/keys.js';
import { orgsBalance, orgsCreate, orgsSetStatus } from '../../src/cli/commands/orgs.js';
import { usersCreate, usersSetPassword } from '../../src/cli/commands/users.js';
import { verifyPassword } from '../../src/console/passwords.js';
import { createOrg } from '../../src/store/orgs.js';
import { hashToken } from '../../src/store/sessions.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

let t: TestApp;
let org: { id: string; name: string };
const tok: Record<'owner' | 'admin' | 'member', Tokens> = {} as never;
const ids: Record<'owner' | 'admin' | 'member', string> = {} as never;

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> };
type Entry = { id: number; created_at: string; org_id: string | null; user_id: string | null; actor: { id: string | null; email: string }; action: string; target: { type: string; id: string; name: string | null }; details: Record<string, unknown>; ip: string | null };

function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, tokens?: Tokens, payload?: object, remoteAddress?: string): Promise<Answer> {
  return t.app.inject({ method, url: `${API}${url}`, headers: tokens ? bearer(tokens) : {}, payload, remoteAddress });
}
async function orgLog(query = '', as: Tokens = tok.admin): Promise<Entry[]> {
  const res = await call('GET', `/orgs/${org.id}/audit${query}`, as);
  assert.equal(res.statusCode, 200, res.body);
  return json<{ entries: Entry[] }>(res).entries;
}
async function securityLog(tokens: Tokens, query = ''): Promise<Entry[]> {
  const res = await call('GET', `/me/audit${query}`, tokens);
  assert.equal(res.statusCode, 200, res.body);
  return json<{ entries: Entry[] }>(res).entries;
}
const rowsOf = (where: Record<string, unknown>) => t.db('audit_log').where(where).orderBy('id');

before(async () => {
  t = await buildTestApp();
  const o = await createOrg(t.db, { name: `audit-${Date.now()}` });
  org = { id: o.id, name: o.name };
  for (const role of ['owner', 'admin', 'member'] as const) {
    ids[role] = (await consoleUser(t.db, `${role}@audit.example`, [{ orgId: org.id, role }])).id;
    tok[role] = await login(t.app, `${role}@audit.example`);
  }
  // A failure forced inside the change's transaction: the entry of anything named "fail-…" cannot be written.
  await t.db.raw(`
    create function audit_fail() returns trigger language plpgsql as $$
    begin
      if new.target_name like 'fail-%' then raise exception 'forced audit failure for %', new.target_name; end if;
      return new;
    end $$;
    create trigger audit_fail before insert on audit_log for each row execute function audit_fail();`);
});
after(async () => {
  await t?.close();
});

describe('security events of an account', () => {
  test('a sign-in is in the security log of the account, with its session and address', async () => {
    const me = await consoleUser(t.db, 'signin@audit.example');
    const tokens = await login(t.app, me.email);
    const log = await securityLog(tokens, '?action=session.login');
    assert.equal(log.length, 1);
    assert.equal(log[0].user_id, me.id);
    assert.equal(log[0].org_id, null, 'an account event belongs to no organisation');
    assert.deepEqual(log[0].actor, { id: me.id, email: me.email });
    assert.equal(log[0].target.type, 'session');
    assert.equal(log[0].ip, '127.0.0.1');
    assert.equal((await orgLog('?action=session.login')).length, 0, "an account's sign-ins are not in an organisation's log");
  });

  test('a failed sign-in is recorded for the account; one for an e-mail without an account has neither organisation nor account', async () => {
    const me = await consoleUser(t.db, 'failed@audit.example');
    assert.equal((await call('POST', '/auth/login', undefined, { email: me.email, password: 'not the password at all' }, '10.1.0.1')).statusCode, 401);
    const tokens = await login(t.app, me.email);
    const [failed] = await securityLog(tokens, '?action=session.login_failed');
    assert.equal(failed.user_id, me.id);
    assert.deepEqual(failed.actor, { id: null, email: me.email }, 'nobody proved who they are');
    assert.equal(failed.details.reason, 'invalid_credentials');
    assert.equal(failed.ip, '10.1.0.1');

    assert.equal((await call('POST', '/auth/login', undefined, { email: 'Nobody@Audit.example', password: 'whatever it may be' }, '10.1.0.2')).statusCode, 401);
    const [unknown] = await rowsOf({ action: 'session.login_failed', actor_email: 'Nobody@Audit.example' });
    assert.equal(unknown.org_id, null);
    assert.equal(unknown.user_id, null);
    assert.equal(unknown.details.account_exists, false);
    // operators see it (recog audit list)
    const listed = await auditList(t.db, { action: 'session.login_failed', actor: 'nobody@audit.example' });
    assert.equal(listed.length, 1);
  });

  test('a throttled sign-in is recorded (the 429 is unchanged)', async () => {
    const me = await consoleUser(t.db, 'throttled@audit.example');
    let refused: Answer | undefined;
    for (let i = 0; i < 8 && !refused; i++) {
      const res = await call('POST', '/auth/login', undefined, { email: me.email, password: `wrong password ${i}` }, '10.2.0.1');
      if (res.statusCode === 429) refused = res;
      else assert.equal(res.statusCode, 401, res.body);
    }
    assert.ok(refused, 'the throttle refused an attempt');
    assert.equal(json(refused).error_code, 'LOGIN_THROTTLED');
    const rows = await rowsOf({ action: 'session.login_throttled', actor_email: me.email });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].user_id, me.id, "in the account's security log");
    assert.equal(rows[0].ip, '10.2.0.1');
    assert.equal(rows[0].details.endpoint, 'login');
    assert.ok(Number(rows[0].details.retry_after_seconds) >= 1);
  });

  test('a wrong password when accepting an invitation is a failed sign-in of the account', async () => {
    const me = await consoleUser(t.db, 'invitee@audit.example');
    const inv = await call('POST', `/orgs/${org.id}/members`, tok.admin, { email: me.email, role: 'viewer' });
    const token = /#\/invite\/(rci_[A-Za-z0-9_-]+)$/.exec(json<{ invitation_url: string }>(inv).invitation_url)?.[1];
    assert.ok(token);
    assert.equal((await call('POST', '/invitations/accept', undefined, { token, password: 'a guessed password' }, '10.4.0.1')).statusCode, 401);
    const rows = await rowsOf({ action: 'session.login_failed', user_id: me.id });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].details.endpoint, 'invitations/accept');
  });

  test('sign-out and revoking a session are recorded, in the transaction of the revocation', async () => {
    const me = await consoleUser(t.db, 'signout@audit.example');
    const a = await login(t.app, me.email);
    const b = await login(t.app, me.email);
    const sessions = json<{ sessions: Array<{ id: string; current: boolean }> }>(await call('GET', '/sessions', a)).sessions;
    const other = sessions.find((s) => !s.current);
    assert.ok(other);
    assert.equal((await call('DELETE', `/sessions/${other.id}`, a)).statusCode, 204);
    assert.equal((await call('POST', '/auth/logout', a)).statusCode, 204);
    const c = await login(t.app, me.email);
    const log = await securityLog(c, '?action=session.revoke,session.logout');
    assert.deepEqual(log.map((e) => e.action).sort(), ['session.logout', 'session.revoke']);
    assert.equal(log.find((e) => e.action === 'session.revoke')?.target.id, other.id);
    void b;
  });

  test('a password change is recorded; a wrong current password too; a forced failure leaves neither the change nor an entry', async () => {
    const me = await consoleUser(t.db, 'pw@audit.example');
    const tokens = await login(t.app, me.email);
    assert.equal((await call('POST', '/me/password', tokens, { current_password: 'not the password', new_password: 'a brand new password' }, '10.3.0.1')).statusCode, 401);
    const changed = await call('POST', '/me/password', tokens, { current_password: PASSWORD, new_password: 'a brand new password' });
    assert.equal(changed.statusCode, 200, changed.body);
    const log = await securityLog(json<Tokens>(changed), '?action=user.*');
    assert.deepEqual(log.map((e) => e.action), ['user.password_change', 'user.password_change_failed']);

    // the entry of fail-… cannot be written: the password, the sessions and the log stay as they were
    const victim = await consoleUser(t.db, 'fail-pw@audit.example');
    const vt = await login(t.app, victim.email);
    const res = await call('POST', '/me/password', vt, { current_password: PASSWORD, new_password: 'another new password' });
    assert.equal(res.statusCode, 500, res.body);
    const row = await t.db('users').where({ id: victim.id }).first<{ password_hash: string; password_changed_at: Date | null }>();
    assert.equal(row.password_changed_at, null);
    assert.ok(await verifyPassword(PASSWORD, row.password_hash), 'the old password still works');
    assert.equal((await call('GET', '/me', vt)).statusCode, 200, 'the session was not ended');
    assert.equal((await rowsOf({ user_id: victim.id, action: 'user.password_change' })).length, 0);
  });

  test('a replayed refresh token is recorded with the account whose session it revoked', async () => {
    const me = await consoleUser(t.db, 'replay@audit.example');
    const first = await login(t.app, me.email);
    const next = await call('POST', '/auth/refresh', undefined, { refresh_token: first.refresh_token });
    assert.equal(next.statusCode, 200, next.body);
    // long past any grace for a concurrent refresh: a replay
    await t.db('console_tokens').where({ token_hash: hashToken(first.refresh_token) }).update({ used_at: t.db.raw(`now() - interval '1 hour'`) });
    const replay = await call('POST', '/auth/refresh', undefined, { refresh_token: first.refresh_token });
    assert.equal(json(replay).error_code, 'REFRESH_REUSED', replay.body);
    const rows = await rowsOf({ action: 'session.refresh_reused', user_id: me.id });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].actor_email, me.email);
  });

  test('a refused role is in the organisation log', async () => {
    const res = await call('POST', `/orgs/${org.id}/members`, tok.admin, { email: 'boss@audit.example', role: 'owner' });
    assert.equal(res.statusCode, 403);
    const denied = await call('GET', `/orgs/${org.id}/audit`, tok.member);
    assert.equal(json(denied).error_code, 'FORBIDDEN_ROLE');
    const log = await orgLog('?action=access.forbidden_role');
    const byWho = log.map((e) => `${e.actor.email} ${String(e.details.role)} ${String(e.details.method)} ${String(e.details.route)}`).sort();
    assert.deepEqual(byWho, [
      'admin@audit.example admin POST /console/api/v1/orgs/:org/members',
      'member@audit.example member GET /console/api/v1/orgs/:org/audit',
    ]);
  });
});

describe('changes and their entries commit together', () => {
  test('key create, update, suspend and revoke: each entry is written; a forced failure leaves no key and no entry', async () => {
    const created = await call('POST', `/orgs/${org.id}/keys`, tok.member, { name: 'kept', classes: ['*'] });
    assert.equal(created.statusCode, 201, created.body);
    const id = json<{ key: { id: string } }>(created).key.id;
    assert.equal((await call('PATCH', `/orgs/${org.id}/keys/${id}`, tok.member, { monthly_quota: 5 })).statusCode, 200);
    assert.equal((await call('POST', `/orgs/${org.id}/keys/${id}/suspend`, tok.member)).statusCode, 200);
    assert.equal((await call('POST', `/orgs/${org.id}/keys/${id}/revoke`, tok.member)).statusCode, 200);
    // refused (revoked is final): nothing changed, nothing written
    assert.equal((await call('POST', `/orgs/${org.id}/keys/${id}/resume`, tok.member)).statusCode, 409);
    const log = await orgLog(`?action=key.*`);
    assert.deepEqual(log.filter((e) => e.target.id === id).map((e) => e.action).reverse(), ['key.create', 'key.update', 'key.suspend', 'key.revoke']);

    const failed = await call('POST', `/orgs/${org.id}/keys`, tok.member, { name: 'fail-key', classes: ['*'] });
    assert.equal(failed.statusCode, 500, failed.body);
    assert.equal(await t.db('api_keys').where({ name: 'fail-key' }).first(), undefined, 'the key was rolled back with its entry');

    // a rename to fail-… is rolled back: the key keeps its name
    const other = json<{ key: { id: string } }>(await call('POST', `/orgs/${org.id}/keys`, tok.member, { name: 'renamed?', classes: ['*'] })).key.id;
    assert.equal((await call('PATCH', `/orgs/${org.id}/keys/${other}`, tok.member, { name: 'fail-rename' })).statusCode, 500);
    assert.equal((await t.db('api_keys').where({ id: other }).first<{ name: string }>()).name, 'renamed?');
  });

  test('a member change is written with its entry; a forced failure keeps the role', async () => {
    const m = await consoleUser(t.db, 'fail-member@audit.example', [{ orgId: org.id, role: 'viewer' }]);
    assert.equal((await call('PATCH', `/orgs/${org.id}/members/${m.id}`, tok.admin, { role: 'member' })).statusCode, 500);
    assert.equal((await t.db('memberships').where({ org_id: org.id, user_id: m.id }).first<{ role: string }>()).role, 'viewer');
    assert.equal((await call('DELETE', `/orgs/${org.id}/members/${m.id}`, tok.admin)).statusCode, 500);
    assert.ok(await t.db('memberships').where({ org_id: org.id, user_id: m.id }).first(), 'still a member');

    const ok = await consoleUser(t.db, 'ok-member@audit.example', [{ orgId: org.id, role: 'viewer' }]);
    assert.equal((await call('PATCH', `/orgs/${org.id}/members/${ok.id}`, tok.admin, { role: 'member' })).statusCode, 200);
    assert.equal((await call('DELETE', `/orgs/${org.id}/members/${ok.id}`, tok.admin)).statusCode, 204);
    const log = await orgLog('?action=member.*');
    assert.deepEqual(log.filter((e) => e.target.id === ok.id).map((e) => e.action), ['member.remove', 'member.role_change']);
    assert.equal(log.filter((e) => e.target.id === m.id).length, 0);
  });
});

describe('the server CLI', () => {
  const deps = (): KeyDeps => ({ db: t.db, labels: async () => ['person'], defaultMonthlyQuota: 100 });

  test('every write is audited as recog CLI, in its transaction', async () => {
    const o = await orgsCreate(t.db, `cli-audit-${Date.now()}`, { balance: '10' });
    await orgsSetStatus(t.db, o.name, 'suspended');
    await orgsSetStatus(t.db, o.name, 'suspended'); // no change, no entry
    await orgsSetStatus(t.db, o.name, 'active');
    await orgsBalance(t.db, o.name, { add: '5' });
    const k = await keysCreate(deps(), { org: o.name, name: 'cli key', classes: 'person' });
    await keysUpdate(deps(), k.id, { quota: '7' });
    await keysSetStatus(deps(), k.id, 'suspend');
    await keysSetStatus(deps(), k.id, 'revoke');
    const u = await usersCreate(t.db, { email: 'cli-user@audit.example', org: o.name, role: 'admin' }, async () => 'a password for the cli');
    await usersSetPassword(t.db, 'cli-user@audit.example', async () => 'another password for the cli');

    const orgRows = await rowsOf({ org_id: o.id });
    assert.deepEqual(orgRows.map((r: { action: string }) => r.action), [
      'org.create', 'org.suspend', 'org.resume', 'org.balance', 'key.create', 'key.update', 'key.suspend', 'key.revoke', 'member.add',
    ]);
    assert.ok(orgRows.every((r: { actor_email: string; actor_user_id: string | null }) => r.actor_email === 'recog CLI' && r.actor_user_id === null));
    assert.deepEqual(orgRows[3].details, { from: 10, to: 15, add: 5 });
    const userRows = await rowsOf({ user_id: u.user.id });
    assert.deepEqual(userRows.map((r: { action: string; actor_email: string }) => `${r.action} by ${r.actor_email}`), ['user.create by recog CLI', 'user.password_reset by recog CLI']);
    // the console shows them to the organisation's admins, filterable by the CLI actor
    // The operator's password is temporary: the user chooses their own first (the new session is in the answer).
    const temporary = await login(t.app, 'cli-user@audit.example', 'another password for the cli');
    const changed = await t.app.inject({
      method: 'POST',
      url: `${API}/me/password`,
      headers: { authorization: `Bearer ${temporary.access_token}` },
      payload: { current_password: 'another password for the cli', new_password: 'the admin chose this one' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    const tokens = json<Tokens>(changed);
    const viaApi = json<{ entries: Entry[] }>(await call('GET', `/orgs/${o.id}/audit?actor=recog%20CLI&action=org.*`, tokens)).entries;
    assert.deepEqual(viaApi.map((e) => e.action), ['org.balance', 'org.resume', 'org.suspend', 'org.create']);
  });

  test('a CLI write whose entry fails is not made', async () => {
    await assert.rejects(orgsCreate(t.db, 'fail-org', {}), /forced audit failure/);
    assert.equal(await t.db('organizations').where({ name: 'fail-org' }).first(), undefined);
    await assert.rejects(usersCreate(t.db, { email: 'fail-cli@audit.example', org: org.name, role: 'viewer' }, async () => 'a password for the cli'), /forced audit failure/);
    assert.equal(await t.db('users').where({ email: 'fail-cli@audit.example' }).first(), undefined, 'neither the account nor the membership');
  });
});

describe('filters and export', () => {
  let fromHour: Date;
  before(async () => {
    // History to filter: 1200 entries (more than one page of the export), an hour and a day old.
    fromHour = new Date(Date.now() - 3600_000);
    const old = (i: number) => ({
      org_id: org.id, actor_user_id: ids.owner, actor_email: 'owner@audit.example', action: i % 2 === 0 ? 'key.create' : 'key.suspend',
      target_type: 'key', target_id: `k${i}`, target_name: `old ${i}`, details: '{}', ip: '127.0.0.1',
      created_at: new Date(Date.now() - (i < 600 ? 24 : 1.5) * 3600_000),
    });
    await t.db.batchInsert('audit_log', Array.from({ length: 1200 }, (_, i) => old(i)), 500);
  });

  test('action (exact and prefix), actor (e-mail in any case, or id), since and until', async () => {
    const suspends = await orgLog('?action=key.suspend&limit=1000');
    assert.ok(suspends.length > 0 && suspends.every((e) => e.action === 'key.suspend'));
    const keyish = await orgLog('?action=key.create,member.*&limit=1000');
    assert.ok(keyish.every((e) => e.action === 'key.create' || e.action.startsWith('member.')));
    assert.ok(keyish.some((e) => e.action.startsWith('member.')));
    const byOwner = await orgLog('?actor=OWNER@audit.example&limit=1000');
    assert.ok(byOwner.length === 1000 && byOwner.every((e) => e.actor.email === 'owner@audit.example'));
    assert.deepEqual((await orgLog(`?actor=${ids.owner}&limit=5`)).map((e) => e.actor.id), Array(5).fill(ids.owner));
    const lastHour = await orgLog(`?since=${fromHour.toISOString()}&limit=1000`);
    assert.ok(lastHour.length > 0 && lastHour.every((e) => Date.parse(e.created_at) >= fromHour.getTime()));
    assert.ok(!lastHour.some((e) => e.target.name?.startsWith('old ')));
    const window = await orgLog(`?since=${new Date(Date.now() - 2 * 3600_000).toISOString()}&until=${fromHour.toISOString()}&limit=1000`);
    assert.equal(window.length, 600);
    // paging: older than an id
    const page1 = await orgLog('?limit=10');
    const page2 = await orgLog(`?limit=10&before=${page1[9].id}`);
    assert.ok(page2[0].id < page1[9].id);
  });

  test('filters that cannot be read answer 400', async () => {
    for (const q of ['?action=DROP TABLE', '?action=key', '?since=yesterday', '?until=2026-13-45T00:00:00Z', '?limit=0', '?format=csv']) {
      const res = await call('GET', `/orgs/${org.id}/audit${q}`, tok.admin);
      assert.equal(res.statusCode, 400, `${q}: ${res.body}`);
      assert.equal(json(res).error_code, 'VALIDATION_FAILED');
    }
  });

  test('JSON lines over real HTTP: every matching entry, one per line, newest first; filters honoured; admins only', async () => {
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const get = (q: string, as: Tokens) => fetch(`${base}${API}/orgs/${org.id}/audit?${q}`, { headers: bearer(as) });
    const res = await get('format=jsonl', tok.admin);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="audit-.*\.jsonl"/);
    const text = await res.text();
    assert.ok(text.endsWith('\n'));
    const lines = text.slice(0, -1).split('\n').map((l) => JSON.parse(l) as Entry);
    const total = Number((await t.db('audit_log').where({ org_id: org.id }).count<Array<{ count: string }>>('* as count'))[0].count);
    assert.equal(lines.length, total, 'more than one page, all of it');
    assert.ok(total > 1200);
    assert.ok(lines.every((e, i) => i === 0 || e.id < lines[i - 1].id), 'newest first, no entry twice');
    assert.ok(lines.every((e) => typeof e.created_at === 'string' && typeof e.action === 'string'));

    const filtered = (await (await get(`format=jsonl&action=key.suspend&until=${fromHour.toISOString()}`, tok.admin)).text()).trim().split('\n').map((l) => JSON.parse(l) as Entry);
    assert.equal(filtered.length, 600);
    assert.ok(filtered.every((e) => e.action === 'key.suspend' && Date.parse(e.created_at) < fromHour.getTime()));
    const limited = (await (await get('format=jsonl&limit=3', tok.admin)).text()).trim().split('\n');
    assert.equal(limited.length, 3);

    const member = await get('format=jsonl', tok.member);
    assert.equal(member.status, 403);
  });

  test('an account exports its own security log', async () => {
    const res = await call('GET', '/me/audit?format=jsonl', tok.owner);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
    const lines = res.body.trim().split('\n').map((l) => JSON.parse(l) as Entry);
    assert.ok(lines.length >= 1 && lines.every((e) => e.user_id === ids.owner));
    assert.ok(lines.some((e) => e.action === 'session.login'));
  });
});
