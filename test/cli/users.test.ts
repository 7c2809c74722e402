/** `recog users create`: the password from stdin (never argv), rules, membership; the process end to end. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Knex } from 'knex';
import { usersCreate, usersInvite, usersSetPassword } from '../../src/cli/commands/users.js';
import { invitationByToken } from '../../src/store/invitations.js';
import { sessionForAccessToken, startSession } from '../../src/store/sessions.js';
import { verifyPassword } from '../../src/console/passwords.js';
import { createDb } from '../../src/store/db.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { findUserByEmail, membershipsOf } from '../../src/store/users.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

let database: TestDatabase;
let db: Knex;

before(async () => {
  database = await createTestDatabase();
  db = createDb(database.url);
  await migrateLatest(db);
  await createOrg(db, { name: 'acme' });
  await createOrg(db, { name: 'globex' });
});
after(async () => {
  await db.destroy();
  await database.drop();
});

function recog(args: string[], stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

test('creates an owner with the password read from stdin; the password never appears in the output', async () => {
  const password = 'a long enough passphrase';
  const r = await recog(['users', 'create', '--email', 'Ada@Acme.example', '--org', 'acme', '--role', 'owner', '--password-stdin', '--json'], `${password}\n`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { user: { email: string }; role: string; created: boolean };
  assert.deepEqual({ email: out.user.email, role: out.role, created: out.created }, { email: 'Ada@Acme.example', role: 'owner', created: true });
  assert.ok(!r.stdout.includes(password) && !r.stderr.includes(password));
  const user = await findUserByEmail(db, 'ada@acme.example');
  assert.ok(user && (await verifyPassword(password, user.password_hash)));
  assert.ok(!user.password_hash.includes(password));
  assert.match(user.password_hash, /^scrypt\$131072\$8\$1\$/);
});

test('refuses short passwords, unknown roles, a second membership in the same organisation; adds an existing user elsewhere without asking', async () => {
  const short = await recog(['users', 'create', '--email', 'bob@acme.example', '--org', 'acme', '--password-stdin'], 'short\n');
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /at least 12 characters/);
  assert.equal(await findUserByEmail(db, 'bob@acme.example'), null);

  await assert.rejects(usersCreate(db, { email: 'x@acme.example', org: 'acme', role: 'boss' }, async () => 'long enough password'), /--role must be one of/);
  await assert.rejects(usersCreate(db, { email: 'ADA@acme.example', org: 'acme', role: 'admin' }, async () => 'irrelevant'), /already owner/);
  let asked = false;
  const r = await usersCreate(db, { email: 'ada@acme.example', org: 'globex', role: 'viewer' }, async () => {
    asked = true;
    return '';
  });
  assert.equal(r.created, false);
  assert.equal(asked, false);
  const user = await findUserByEmail(db, 'ada@acme.example');
  assert.deepEqual((await membershipsOf(db, user!.id)).map((m) => `${m.org.name}:${m.role}`), ['acme:owner', 'globex:viewer']);
});

test('set-password replaces a forgotten password and ends the user\'s sessions', async () => {
  const user = (await findUserByEmail(db, 'ada@acme.example'))!;
  const session = (await startSession(db, user.id, { accessSeconds: 600, refreshSeconds: 3600, idleSeconds: 1800 }, {}, user.password_hash))!;
  await assert.rejects(usersSetPassword(db, 'ada@acme.example', async () => 'short'), /at least 12/);
  await assert.rejects(usersSetPassword(db, 'nobody@acme.example', async () => 'long enough password'), /no user/);
  await usersSetPassword(db, 'ADA@acme.example', async () => 'a brand new passphrase');
  const after = (await findUserByEmail(db, 'ada@acme.example'))!;
  assert.ok(await verifyPassword('a brand new passphrase', after.password_hash));
  assert.equal(await sessionForAccessToken(db, session.accessToken), null);
});

test('invite prints a one-time link; the operator never chooses the password; audited as the CLI', async () => {
  await assert.rejects(usersInvite(db, { email: 'cfo@globex.example', org: 'globex', role: 'boss' }, 'http://cv.test'), /--role must be one of/);
  const r = await usersInvite(db, { email: 'cfo@globex.example', org: 'globex', role: 'admin' }, 'http://cv.test');
  const token = /^http:\/\/cv\.test\/console\/#\/invite\/(rci_[\w-]+)$/.exec(r.invitation_url)?.[1];
  assert.ok(token, r.invitation_url);
  const inv = await invitationByToken(db, token);
  assert.deepEqual({ email: inv?.email, role: inv?.role, org: inv?.org_name, account: inv?.account_exists }, { email: 'cfo@globex.example', role: 'admin', org: 'globex', account: false });
  assert.equal(await findUserByEmail(db, 'cfo@globex.example'), null, 'no account until the invitee accepts');
  const row = await db('audit_log').where({ action: 'invitation.create', target_name: 'cfo@globex.example' }).first();
  assert.equal(row?.actor_email, 'recog CLI');
  assert.equal(row?.actor_user_id, null);
});
