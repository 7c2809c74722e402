/**
 * recog-client keeps credentials where they belong (issue 29): keys are read from a file or
 * stdin, a key on the command line is warned about and refused by `config set`; a login
 * goes only to the server it came from; plain http only to loopback; no redirect followed.
 * The built bin as a child process against small recording servers on loopback.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from './cli-run.js';
import { fakeService, redirectingServer, REQUEST_ID, type RecordingServer } from './loopback-servers.js';

let home: string;
const servers: RecordingServer[] = [];
before(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'recog-client-creds-'));
});
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await rm(home, { recursive: true, force: true });
});
async function keep(s: Promise<RecordingServer>): Promise<RecordingServer> {
  const server = await s;
  servers.push(server);
  return server;
}
const run = (args: string[], input = '', env: Record<string, string> = {}) => runCli(home, args, env, input);
const configFile = () => path.join(home, 'config', 'recog-client', 'config.json');
const sentKeys = (s: RecordingServer) => s.received.map((r) => r.headers['x-api-key']);
const WARNING = /warning: --api-key puts the key in your shell history and in the process list \(ps\)/;

test('--api-key on the command line works but warns on stderr; --api-key-file and --api-key - do not', async () => {
  const svc = await keep(fakeService());
  const argv = await run(['--base-url', svc.url, '--json', '--api-key', 'cvk_from_argv', 'request', REQUEST_ID]);
  assert.equal(argv.code, 0, argv.stderr);
  assert.match(argv.stderr, WARNING);
  assert.match(argv.stderr, /--api-key-file/);

  const keyFile = path.join(home, 'key');
  await writeFile(keyFile, 'cvk_from_file\n', { mode: 0o600 });
  const file = await run(['--base-url', svc.url, '--json', '--api-key-file', keyFile, 'request', REQUEST_ID]);
  assert.equal(file.code, 0, file.stderr);
  assert.equal(file.stderr, '');

  const stdin = await run(['--base-url', svc.url, '--json', '--api-key', '-', 'request', REQUEST_ID], 'cvk_from_stdin\n');
  assert.equal(stdin.code, 0, stdin.stderr);
  assert.doesNotMatch(stdin.stderr, WARNING);
  assert.deepEqual(sentKeys(svc), ['cvk_from_argv', 'cvk_from_file', 'cvk_from_stdin']);

  await chmod(keyFile, 0o644);
  const open = await run(['--base-url', svc.url, '--api-key-file', keyFile, 'request', REQUEST_ID]);
  assert.equal(open.code, 0, open.stderr);
  assert.match(open.stderr, /readable by other users/);
  assert.equal((await run(['--base-url', svc.url, '--api-key-file', keyFile, '--api-key', 'cvk_x', 'request', REQUEST_ID])).code, 2, 'both: usage error');
  assert.equal((await run(['--base-url', svc.url, '--api-key-file', path.join(home, 'missing'), 'request', REQUEST_ID])).code, 2);
});

test('config set api_key <value> is refused (nothing saved); "-" (stdin) and --file store the key', async () => {
  const svc = await keep(fakeService());
  const refused = await run(['config', 'set', 'api_key', 'cvk_on_the_command_line']);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /takes no key as an argument/);
  assert.ok(refused.stderr.includes(`printf '%s' "$KEY" | recog-client config set api_key -`), refused.stderr);
  assert.match(refused.stderr, /config set api_key --file PATH/);
  assert.ok(!(await readFile(configFile(), 'utf8').catch(() => '')).includes('cvk_on_the_command_line'), 'not saved');

  const piped = await run(['config', 'set', 'api_key', '-'], 'cvk_piped\n');
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal((await run(['--base-url', svc.url, 'request', REQUEST_ID])).code, 0);

  const keyFile = path.join(home, 'key-for-config');
  await writeFile(keyFile, 'cvk_config_file\n', { mode: 0o600 });
  const fromFile = await run(['config', 'set', 'api_key', '--file', keyFile]);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.equal((await run(['--base-url', svc.url, 'request', REQUEST_ID])).code, 0);
  assert.deepEqual(sentKeys(svc), ['cvk_piped', 'cvk_config_file']);
  assert.equal((await run(['config', 'set', 'org', 'acme'])).code, 0, 'other settings still take a value');
});

test('a login is bound to its server: with another --base-url no token is sent and the CLI asks to log in again', async () => {
  const a = await keep(fakeService());
  const b = await keep(fakeService());
  const login = await run(['--base-url', a.url, 'login', '--email', 'dana@example.com', '--password-stdin'], 'pw\n');
  assert.equal(login.code, 0, login.stderr);
  assert.equal((await run(['--base-url', a.url, 'whoami'])).code, 0);

  const elsewhere = await run(['--base-url', b.url, 'whoami']);
  assert.equal(elsewhere.code, 3);
  assert.ok(elsewhere.stderr.includes(`not logged in to ${b.url}: the saved login is for ${a.url}`), elsewhere.stderr);
  assert.match(elsewhere.stderr, /log in again.*recog-client login/);
  assert.equal((await run(['--base-url', b.url, 'logout'])).code, 3, 'logout of B neither sends A\'s tokens nor forgets them');
  assert.equal((await run(['--base-url', b.url, 'keys', 'list', '--org', 'acme'])).code, 3);
  assert.deepEqual(b.received, [], 'B got nothing');
  assert.equal((await run(['--base-url', a.url, 'whoami'])).code, 0, 'still logged in to A');
});

test('plain http is refused except to loopback, before anything is sent; the opt-out flag warns', async () => {
  const refused = await run(['--base-url', 'http://example.invalid', 'request', REQUEST_ID], '', { RECOG_API_KEY: 'cvk_x' });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /refusing plain http to example\.invalid.*use https:\/\/example\.invalid, or pass --allow-insecure-http/);
  const login = await run(['--base-url', 'http://example.invalid', 'login', '--email', 'dana@example.com', '--password-stdin'], 'pw');
  assert.equal(login.code, 2);
  assert.match(login.stderr, /refusing plain http/);
  const optOut = await run(['--base-url', 'http://example.invalid', '--allow-insecure-http', '--timeout', '5', 'request', REQUEST_ID], '', { RECOG_API_KEY: 'cvk_x' });
  assert.match(optOut.stderr, /warning: --allow-insecure-http/);
  assert.equal(optOut.code, 5, 'tried, and example.invalid does not resolve');

  const svc = await keep(fakeService());
  const loopback = await run(['--base-url', svc.url, 'request', REQUEST_ID], '', { RECOG_API_KEY: 'cvk_x' });
  assert.equal(loopback.code, 0, loopback.stderr);
});

test('a redirect is not followed: the key does not reach the Location, and the message names it', async () => {
  const to = await keep(fakeService());
  const from = await keep(redirectingServer(() => to.url, 301));
  const r = await run(['--base-url', from.url, 'request', REQUEST_ID], '', { RECOG_API_KEY: 'cvk_x' });
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(`301 to ${to.url}/v1/cv/requests/${REQUEST_ID}; not followed`), r.stderr);
  assert.deepEqual(to.received, []);
});
