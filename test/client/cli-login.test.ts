/**
 * recog-client with a login, against the real service's console API on real PostgreSQL:
 * login, tokens at rest, refresh after the access token expires (1 s TTL here), commands
 * running at once sharing one session, a stolen refresh token refused, the key lifecycle.
 */
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { hashPassword } from '../../src/console/passwords.js';
import { addMember, createUser } from '../../src/store/users.js';
import type { TestApp, TestKey } from '../helpers/app.js';
import { agePastGrace } from '../helpers/console.js';
import { fixturePath } from '../helpers/fixtures.js';
import { startCliHarness, type CliHarness } from './cli-harness.js';

const EMAIL = 'Dana@Example.com';
const PASSWORD = 'correct horse battery staple';
let cli: CliHarness;
let t: TestApp;
let org: TestKey;
let baseUrl: string;
let home: string;
let run: CliHarness['run'];

before(async () => {
  cli = await startCliHarness({ CONSOLE_ACCESS_TTL_SECONDS: '1' });
  ({ t, baseUrl, home, run } = cli);
  org = await t.newKey();
  const user = await createUser(t.db, { email: EMAIL, passwordHash: await hashPassword(PASSWORD, { N: 2 ** 14, r: 8, p: 1 }) });
  await addMember(t.db, org.orgId, user.id, 'owner');
});
after(() => cli.close());

const credentialsFile = () => path.join(home, 'config', 'recog-client', 'credentials.json');
const refreshToken = async () => (JSON.parse(await readFile(credentialsFile(), 'utf8')) as { profiles: { default: { refreshToken: string } } }).profiles.default.refreshToken;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('login reads the password from stdin and keeps the tokens 0600; a wrong password says nothing about the account', async () => {
  const wrong = await run(['login', '--email', EMAIL, '--password-stdin'], {}, 'not the password at all');
  assert.equal(wrong.code, 3);
  const unknown = await run(['login', '--email', 'nobody@example.com', '--password-stdin'], {}, 'not the password at all');
  assert.equal(unknown.code, 3);
  assert.equal(wrong.stderr.replace(/\s+/g, ' '), unknown.stderr.replace(/\s+/g, ' '), 'same answer whether or not the e-mail exists');

  const r = await run(['login', '--email', 'dana@example.com', '--password-stdin'], {}, `${PASSWORD}\n`);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Logged in/);
  assert.equal((await stat(credentialsFile())).mode & 0o777, 0o600);
  const who = await run(['whoami']);
  assert.equal(who.code, 0, who.stderr);
  assert.match(who.stdout, /dana@example\.com/i);
  assert.match(who.stdout, new RegExp(`${org.orgName}\\s+owner`));
});

test('after the access token expired, commands refresh it and save the rotated refresh token', async () => {
  const before = await refreshToken();
  await sleep(1500);
  const list = await run(['keys', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /test key/);
  assert.notEqual(await refreshToken(), before, 'rotated');
});

test('four commands at once share one session: nobody is logged out', async () => {
  await sleep(1500);
  const runs = await Promise.all([1, 2, 3, 4].map(() => run(['keys', 'list', '--json'])));
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  assert.equal((await run(['whoami'])).code, 0);
});

test('a key made with the login works for inference; suspend, resume and revoke', async () => {
  const created = await run(['--json', 'keys', 'create', '--name', 'cli key', '--classes', 'person', '--quota', '50']);
  assert.equal(created.code, 0, created.stderr);
  const { key, secret } = JSON.parse(created.stdout) as { key: { id: string; status: string }; secret: string };
  assert.match(secret, /^cvk_/);
  const ok = await run(['--api-key', secret, '--json', 'recognize', fixturePath('basketball1.png')]);
  assert.equal(ok.code, 0, ok.stderr);
  const [{ result }] = JSON.parse(ok.stdout) as Array<{ result: { detections: Array<{ label: string }> } }>;
  assert.ok(result.detections.length > 0 && result.detections.every((d) => d.label === 'person'));

  assert.equal((await run(['keys', 'suspend', key.id])).code, 0);
  const refused = await run(['--api-key', secret, 'recognize', fixturePath('camera.png')]);
  assert.equal(refused.code, 3);
  assert.match(refused.stderr, /KEY_SUSPENDED/);
  assert.equal((await run(['keys', 'resume', key.id])).code, 0);
  assert.equal((await run(['--api-key', secret, 'recognize', fixturePath('camera.png')])).code, 0);

  const unconfirmed = await run(['keys', 'revoke', key.id]);
  assert.equal(unconfirmed.code, 2, 'no terminal to confirm on, no --yes: refused');
  const revoked = await run(['--json', 'keys', 'revoke', key.id, '--yes']);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.equal((JSON.parse(revoked.stdout) as { status: string }).status, 'revoked');
  assert.equal((await run(['--api-key', secret, 'recognize', fixturePath('camera.png')])).code, 3);

  const usage = await run(['--json', 'usage', '--days', '7']);
  assert.equal(usage.code, 0, usage.stderr);
  const days = (JSON.parse(usage.stdout) as { days: Array<{ done: number }> }).days;
  assert.ok(days.reduce((n, d) => n + d.done, 0) >= 2, 'the recognitions show in usage');
});

test('a stolen refresh token replayed ends the whole session; then logout', async () => {
  const stolen = await refreshToken();
  await sleep(1500);
  assert.equal((await run(['whoami'])).code, 0, 'the CLI rotates the token the thief holds');
  await agePastGrace(t.db, stolen); // the thief comes after the grace for a concurrent refresh
  const replay = await fetch(`${baseUrl}/console/api/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: stolen }) });
  assert.equal(replay.status, 401);
  assert.equal(((await replay.json()) as { error_code: string }).error_code, 'REFRESH_REUSED');
  await sleep(1500);
  const after = await run(['whoami']);
  assert.equal(after.code, 3, 'the family was revoked, the CLI too must log in again');
  assert.match(after.stderr, /log in again/);

  assert.equal((await run(['login', '--email', EMAIL, '--password-stdin'], {}, PASSWORD)).code, 0);
  assert.equal((await run(['logout'])).code, 0);
  const gone = await run(['whoami']);
  assert.equal(gone.code, 3);
  assert.match(gone.stderr, /not logged in/);
});
