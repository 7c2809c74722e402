/**
 * The embedded defaults end to end: the service started with no DATABASE_URL runs on an
 * embedded PostgreSQL under DATA_DIR, and `recog` commands work on the same data while it
 * runs; SIGTERM stops it cleanly.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';

const run = promisify(execFile);
let dataDir: string;
let server: ChildProcess | undefined;

async function freePort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as net.AddressInfo;
  srv.close();
  return port;
}

before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-e2e-'));
  await chmod(dataDir, 0o755);
});
after(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

test('no DATABASE_URL: embedded PostgreSQL, the CLI joins it while the service runs, SIGTERM exits 0', { timeout: 240_000 }, async () => {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: '',
    REDIS_URL: '',
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    INFERENCE_THREADS: '1',
    MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'),
  };
  server = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/server.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr?.on('data', (c) => (stderr += c));
  server.stdout?.resume();
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    assert.equal(server.exitCode, null, `the service exited: ${stderr}`);
    assert.ok(i < 600, 'the service did not come up');
    await new Promise((r) => setTimeout(r, 200));
  }

  const cli = async (args: string[]) =>
    JSON.parse((await run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), ...args, '--json'], { cwd: REPO_ROOT, env })).stdout);
  const org = await cli(['orgs', 'create', 'acme', '--balance', '2']);
  const key = await cli(['keys', 'create', '--org', 'acme', '--name', 'web']);

  const res = await fetch(`${base}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ external_id: 'e2e', image_base64: readFixture('camera.png').toString('base64') }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { status: string; request_id: string };
  assert.equal(body.status, 'DONE');

  // the CLI sees what the service wrote, and the service sees what the CLI changes
  assert.equal((await cli(['orgs', 'balance', org.id])).balance, 1);
  assert.equal((await cli(['keys', 'show', key.id])).usage_this_month, 1);
  await cli(['keys', 'suspend', key.id]);
  const refused = await fetch(`${base}/v1/cv/requests/${body.request_id}`, { headers: { 'x-api-key': key.key } });
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as { error_code: string }).error_code, 'KEY_SUSPENDED');

  server.kill('SIGTERM');
  const [code] = await once(server, 'exit');
  assert.equal(code, 0, stderr);
});
