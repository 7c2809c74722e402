/**
 * The embedded defaults end to end: the service started with no DATABASE_URL runs on an
 * embedded PostgreSQL under DATA_DIR, and `recog` commands work on the same data while it
 * runs; SIGTERM stops it cleanly. Run twice: on the Node.js the tests run on (the one the
 * lockfile pins) and on the oldest release package.json's engines.node accepts, which must
 * find the same objects in the same photo (Node.js 22.12 cannot hand shared memory to ONNX
 * Runtime: that run takes the copying path).
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { enginesRange, minimumOf } from '../../src/supported-node.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/local-server.js';

const run = promisify(execFile);
const servers: ChildProcess[] = [];
const dataDirs: string[] = [];

after(async () => {
  for (const server of servers) if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

interface Detection {
  label: string;
  external_id: string;
  bounding_box: { x: number; y: number; width: number; height: number };
  confidence: number;
}

/** Starts the service on `node`, drives it with the CLI and HTTP, stops it; the photo's detections. */
async function embeddedEndToEnd(node: string): Promise<Detection[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-e2e-'));
  dataDirs.push(dataDir);
  await chmod(dataDir, 0o755);
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
  const server = spawn(node, ['--import', 'tsx', path.join(REPO_ROOT, 'src/server.ts')], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push(server);
  let stderr = '';
  server.stderr?.on('data', (c) => (stderr += c));
  server.stdout?.resume();
  const base = `http://127.0.0.1:${port}`;
  const exited = once(server, 'exit').then(() => Promise.reject(new Error(`the service exited: ${stderr}`)));
  exited.catch(() => {});
  await Promise.race([eventually(async () => (await fetch(`${base}/healthz`)).ok, { what: 'the service up', timeoutMs: 120_000, intervalMs: 200 }), exited]);

  const cli = async (args: string[]) =>
    JSON.parse((await run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), ...args, '--json'], { cwd: REPO_ROOT, env })).stdout);
  const org = await cli(['orgs', 'create', 'acme', '--balance', '3']);
  const key = await cli(['keys', 'create', '--org', 'acme', '--name', 'web']);

  const res = await fetch(`${base}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ external_id: 'e2e', image_base64: readFixture('camera.png').toString('base64') }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { status: string; request_id: string };
  assert.equal(body.status, 'DONE');

  const photo = await fetch(`${base}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ external_id: 'e2e-photo', image_base64: readFixture('basketball1.png').toString('base64') }),
  });
  const detected = (await photo.json()) as { status: string; results: Detection[] };
  assert.equal(detected.status, 'DONE', JSON.stringify(detected));

  // the CLI sees what the service wrote, and the service sees what the CLI changes
  assert.equal((await cli(['orgs', 'balance', org.id])).balance, 1);
  assert.equal((await cli(['keys', 'show', key.id])).usage_this_month, 2);
  await cli(['keys', 'suspend', key.id]);
  const refused = await fetch(`${base}/v1/cv/requests/${body.request_id}`, { headers: { 'x-api-key': key.key } });
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as { error_code: string }).error_code, 'KEY_SUSPENDED');

  server.kill('SIGTERM');
  const [code] = await once(server, 'exit');
  assert.equal(code, 0, stderr);
  return detected.results;
}

let onThisNode: Detection[] | undefined;

test(`no DATABASE_URL: embedded PostgreSQL, the CLI joins it while the service runs, SIGTERM exits 0 (Node.js ${process.version})`, { timeout: 240_000 }, async () => {
  onThisNode = await embeddedEndToEnd(process.execPath);
  // the two people of the photo (the README's example answer)
  const people = onThisNode.filter((d) => d.label === 'person');
  assert.equal(people.length, 2, JSON.stringify(onThisNode));
  assert.ok(people.some((p) => Math.abs(p.bounding_box.x - 28) <= 4 && Math.abs(p.bounding_box.height - 394) <= 8), JSON.stringify(people));
});

test('the same on the oldest Node.js package.json accepts: the same detections', { timeout: 300_000 }, async () => {
  const version = minimumOf(enginesRange());
  const node = (await run(path.join(REPO_ROOT, 'scripts/node.sh'), [version], { timeout: 240_000 })).stdout.trim();
  assert.equal((await run(node, ['--version'])).stdout.trim(), `v${version}`);
  const onOldest = await embeddedEndToEnd(node);
  assert.ok(onThisNode, 'the run on this Node.js failed');
  assert.deepEqual(onOldest, onThisNode);
});
