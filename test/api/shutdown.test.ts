/** Graceful shutdown on a real listening server: in-flight work finishes, new work is refused, pools close. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startServer } from '../../src/server.js';
import { createDb } from '../../src/store/db.js';
import { createKey } from '../../src/store/keys.js';
import { createOrg } from '../../src/store/orgs.js';
import { testConfig } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

let images: ImageServer;
let database: TestDatabase;
let dataDir: string;

before(async () => {
  images = await startImageServer();
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-shutdown-'));
  await chmod(dataDir, 0o755);
});
after(async () => {
  await images?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

function waitForRow(db: ReturnType<typeof createDb>, externalId: string) {
  return eventually(() => db('requests').where({ external_id: externalId }).first(), { what: `the request ${externalId} started`, intervalMs: 25 });
}

test('SIGTERM path: the in-flight request completes, new connections are refused, pools close', { timeout: 120_000 }, async () => {
  const config = testConfig(database.url, dataDir, { PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '20000' });
  const server = await startServer(config);
  const observer = createDb(database.url);
  try {
    const org = await createOrg(server.database.db, { name: 'shutdown' });
    const { key } = await createKey(server.database.db, { orgId: org.id, name: 'k', monthlyQuota: 100 });
    const base = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`;

    const inFlight = fetch(`${base}/v1/cv/requests/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ external_id: 'in-flight', image_url: images.url('/slow?ms=1500') }),
    });
    await waitForRow(observer, 'in-flight');
    const stopping = server.shutdown('test');

    // New work is refused while draining.
    const late = await fetch(`${base}/healthz`).then(
      (r) => r.status,
      () => 'refused',
    );
    assert.ok(late === 'refused' || late === 503, String(late));

    const res = await inFlight;
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string };
    assert.equal(body.status, 'DONE');
    assert.deepEqual(await stopping, { drained: true });
    await assert.rejects(server.database.db.raw('select 1'), 'the pool is closed');
    const row = await observer('requests').where({ external_id: 'in-flight' }).first();
    assert.equal(row.status, 'DONE');
  } finally {
    await server.shutdown('cleanup');
    await observer.destroy();
  }
});

test('past the drain bound, unfinished requests are marked ERROR before the pools close', { timeout: 120_000 }, async () => {
  const config = testConfig(database.url, dataDir, { PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '300' });
  const server = await startServer(config);
  const observer = createDb(database.url);
  try {
    const org = await createOrg(server.database.db, { name: 'shutdown-bound' });
    const { key } = await createKey(server.database.db, { orgId: org.id, name: 'k', monthlyQuota: 100 });
    const base = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`;
    const inFlight = fetch(`${base}/v1/cv/requests/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ external_id: 'cut-off', image_url: images.url('/slow?ms=20000') }),
    }).catch(() => 'connection closed');
    await waitForRow(observer, 'cut-off');
    assert.deepEqual(await server.shutdown('test'), { drained: false });
    await inFlight;
    const row = await observer('requests').where({ external_id: 'cut-off' }).first();
    assert.equal(row.status, 'ERROR');
    assert.match(row.error, /shut down/);
  } finally {
    await server.shutdown('cleanup');
    await observer.destroy();
  }
});

test('the process exits once shut down, even with a handle left open; the log names the handle', { timeout: 120_000 }, async () => {
  // A ref'd interval stands for a client that forgot a reconnect timer: without the explicit
  // exit the process would linger until SIGKILL (in a pod, the end of its grace period).
  const leak = `data:text/javascript,${encodeURIComponent('setInterval(() => {}, 1 << 30);')}`;
  const server = spawn(process.execPath, ['--import', 'tsx', '--import', leak, 'src/server.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = once(server, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    await eventually(() => /Server listening at/.test(out), { what: 'the server listening', timeoutMs: 90_000 });
    server.kill('SIGTERM');
    const [code, signal] = await exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, out);
    const line = out.split('\n').find((l) => l.includes('exiting with handles still open'));
    assert.ok(line, out);
    assert.ok((JSON.parse(line) as { holding: string[] }).holding.includes('Timeout'), line);
  } finally {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  }
});
