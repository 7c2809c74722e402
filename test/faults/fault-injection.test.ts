/**
 * Fault injection against the real service as a child process, on private PostgreSQL and
 * Redis (never the shared test servers) and a `recog inference-server` child as its Triton:
 *
 *   1. PostgreSQL stopped and started again under load
 *   2. Redis killed under load
 *   3. the inference backend killed mid-request, then started again
 *   4. the service killed with SIGKILL mid-batch, then restarted
 *
 * After each: every answer the service gave is a contract answer (a status the contract
 * allows, an error body with error_code), no request stays QUEUED/PROCESSING, the quota
 * used and the balance spent equal the requests that ended DONE (work delivered), and a
 * lookup of every request a client was told about agrees with what it was told. A summary
 * table is printed. Request loops are bounded, so the whole file takes about a minute.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb } from '../../src/store/db.js';
import { createKey } from '../../src/store/keys.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';
import { eventually } from '../helpers/eventually.js';
import { freePort, portOpen } from '../helpers/local-server.js';
import { privateServicesMissing, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from '../helpers/private-services.js';

const missing = await privateServicesMissing();

const SYNC_TIMEOUT_MS = 8_000;
/** The service's sweep bound (sync limit + margin) plus one sweep interval, and some slack. */
const SETTLE_MS = SYNC_TIMEOUT_MS + 10_000 + 5_000 + 5_000;
const BALANCE = 100_000;

/** Statuses the contract allows for sync/batch under faults, with their error codes. */
const ALLOWED: Record<number, string[] | null> = {
  200: null,
  408: ['PROCESSING_TIMEOUT'],
  409: ['REQUEST_IN_PROGRESS'],
  429: ['RATE_LIMITED', 'TOO_MANY_IN_FLIGHT'],
  503: ['DATABASE_UNAVAILABLE', 'SERVICE_OVERLOADED', 'SERVICE_UNAVAILABLE', 'NOT_READY'],
};

interface Answer {
  kind: 'sync' | 'batch';
  externalId: string;
  status: number | 'connection lost';
  body?: any;
}

interface Row {
  fault: string;
  sent: number;
  ok200: number;
  fiveXx: number;
  lost: number;
  /** Requests the fault made fail after they were charged, refunded (since the previous check). */
  refunded: number;
  chargeMismatch: number;
  lookupMismatch: number;
  nonContract: number;
}

let pg: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let images: ImageServer | undefined;
let db: Knex | undefined;
let dataDir = '';
let key = '';
let keyId = '';
let orgId = '';
let servicePort = 0;
let inferencePort = 0;
let service: ChildProcess | undefined;
let inference: ChildProcess | undefined;
const summary: Row[] = [];
const camera = readFixture('camera.png').toString('base64');
let seq = 0;

function spawnChild(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr?.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-4000)));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGKILL' && signal !== 'SIGTERM') process.stderr.write(`child ${args.join(' ')} exited ${code ?? signal}: ${tail}\n`);
  });
  return child;
}

async function startInference(): Promise<void> {
  inference = spawnChild(['src/cli/main.ts', 'inference-server', '--host', '127.0.0.1', '--port', String(inferencePort), '--http-port', String(await freePort()), '--threads', '1'], {
    MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'),
    LOG_LEVEL: 'warn',
  });
  await eventually(() => portOpen(inferencePort), { what: 'the inference server listening', timeoutMs: 60_000 });
}

async function killChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function startService(): Promise<void> {
  service = spawnChild(['src/server.ts'], {
    PORT: String(servicePort),
    HOST: '127.0.0.1',
    DATABASE_URL: pg!.url,
    REDIS_URL: redis!.url,
    TRITON_URL: `127.0.0.1:${inferencePort}`,
    MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'),
    DATA_DIR: dataDir,
    IMAGE_FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    IMAGE_URL_SECRET: 'fault-injection-secret',
    LOG_LEVEL: 'error',
    SYNC_TIMEOUT_MS: String(SYNC_TIMEOUT_MS),
    INFERENCE_THREADS: '1',
    SHUTDOWN_TIMEOUT_MS: '2000',
  });
  await eventually(async () => (await fetch(`http://127.0.0.1:${servicePort}/readyz`)).status === 200, { what: 'the service ready', timeoutMs: 60_000 });
}

const base = () => `http://127.0.0.1:${servicePort}`;

async function call(kind: 'sync' | 'batch'): Promise<Answer> {
  const externalId = `${kind}-${++seq}`;
  const body =
    kind === 'sync'
      ? { external_id: externalId, image_base64: camera }
      : { external_id: externalId, image_urls: [images!.url('/images/camera.png'), images!.url('/images/basketball1.png'), images!.url('/images/squirrel_cls.jpg')] };
  try {
    const res = await fetch(`${base()}/v1/cv/requests/${kind}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { unparsable: text.slice(0, 200) };
    }
    return { kind, externalId, status: res.status, body: parsed };
  } catch {
    return { kind, externalId, status: 'connection lost' };
  }
}

/** Runs `workers` request loops (sync and batch alternating) while `during` runs, then `tail` more calls each. */
async function underLoad(during: () => Promise<void>, workers = 3, tail = 2): Promise<Answer[]> {
  const answers: Answer[] = [];
  let stop = false;
  const loops = Array.from({ length: workers }, async (_, w) => {
    let i = w;
    while (!stop) {
      const a = await call(i++ % 2 === 0 ? 'sync' : 'batch');
      answers.push(a);
      // A client whose server is gone backs off a little instead of spinning.
      if (a.status === 'connection lost') await sleep(200);
    }
  });
  try {
    await during();
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  for (let i = 0; i < tail; i++) answers.push(await call('sync'), await call('batch'));
  return answers;
}

function isContractAnswer(a: Answer): boolean {
  if (a.status === 'connection lost') return true; // counted apart: a killed process cannot answer
  const allowed = ALLOWED[a.status];
  if (allowed === undefined) return false;
  if (allowed === null) return a.kind === 'sync' ? ['DONE', 'ERROR'].includes(a.body?.status) : Array.isArray(a.body?.results);
  return typeof a.body?.error === 'string' && typeof a.body?.message === 'string' && allowed.includes(a.body?.error_code);
}

async function unfinishedRows(): Promise<number> {
  const [{ n }] = await db!('requests').whereIn('status', ['QUEUED', 'PROCESSING']).count<{ n: string }[]>('* as n');
  return Number(n);
}

/** Waits (bounded by the sweep) until no request is unfinished. */
async function settle(): Promise<void> {
  await eventually(async () => (await unfinishedRows()) === 0, { what: 'no request left QUEUED/PROCESSING', timeoutMs: SETTLE_MS, intervalMs: 250 });
}

/** |quota used − DONE requests| + |balance spent − DONE requests|: work delivered is what is charged. */
async function chargeMismatch(): Promise<number> {
  const [{ n }] = await db!('requests').where({ key_id: keyId, status: 'DONE' }).count<{ n: string }[]>('* as n');
  const done = Number(n);
  const usage = await db!('key_usage').where({ key_id: keyId }).sum<{ used: string | null }[]>('used as used');
  const used = Number(usage[0].used ?? 0);
  const org = await db!('organizations').where({ id: orgId }).first<{ balance: number }>('balance');
  return Math.abs(used - done) + Math.abs(BALANCE - Number(org.balance) - done);
}

/** Lookups agree with the answers: DONE/ERROR as told; no DONE request behind a failure answer. */
async function lookupMismatch(answers: Answer[]): Promise<number> {
  let bad = 0;
  const lookup = async (id: string) => {
    const res = await fetch(`${base()}/v1/cv/requests/${id}`, { headers: { 'x-api-key': key } });
    return res.status === 200 ? ((await res.json()) as { status: string }).status : `http ${res.status}`;
  };
  for (const a of answers) {
    if (a.status === 200 && a.kind === 'sync') {
      if ((await lookup(a.body.request_id)) !== a.body.status) bad++;
    } else if (a.status === 200 && a.kind === 'batch') {
      for (const e of a.body.results as Array<{ request_id: string | null; status: string }>) {
        if (e.request_id === null) continue;
        const told = e.status === 'DONE' ? 'DONE' : 'ERROR';
        if ((await lookup(e.request_id)) !== told) bad++;
      }
    } else if (typeof a.status === 'number') {
      // Told it failed: nothing under its external_id may have ended DONE.
      const [{ n }] = await db!('requests').where({ key_id: keyId, external_id: a.externalId, status: 'DONE' }).count<{ n: string }[]>('* as n');
      if (Number(n) > 0) bad++;
    }
  }
  return bad;
}

let refundedBefore = 0;

async function check(fault: string, answers: Answer[]): Promise<Row> {
  await settle();
  const [{ n: refundedNow }] = await db!('requests').where({ key_id: keyId }).whereNotNull('refunded_at').count<{ n: string }[]>('* as n');
  const refunded = Number(refundedNow) - refundedBefore;
  refundedBefore = Number(refundedNow);
  const row: Row = {
    fault,
    sent: answers.length,
    ok200: answers.filter((a) => a.status === 200).length,
    fiveXx: answers.filter((a) => typeof a.status === 'number' && a.status >= 500).length,
    lost: answers.filter((a) => a.status === 'connection lost').length,
    refunded,
    chargeMismatch: await chargeMismatch(),
    lookupMismatch: await lookupMismatch(answers),
    nonContract: answers.filter((a) => !isContractAnswer(a)).length,
  };
  summary.push(row);
  const odd = answers.filter((a) => !isContractAnswer(a)).slice(0, 3);
  assert.equal(row.nonContract, 0, `answers outside the contract: ${JSON.stringify(odd)}`);
  assert.equal(row.chargeMismatch, 0, 'quota/balance charged ≠ work delivered');
  assert.equal(row.lookupMismatch, 0, 'lookups disagree with what clients were told');
  assert.ok(row.ok200 > 0, 'the service served requests around the fault');
  return row;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

before(async () => {
  if (missing) return;
  [pg, redis, images] = await Promise.all([startPrivatePostgres(), startPrivateRedis(), startImageServer()]);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-faults-'));
  db = createDb(pg.url, { warn: () => {} });
  await migrateLatest(db);
  const org = await createOrg(db, { name: 'faults', balance: BALANCE });
  const created = await createKey(db, { orgId: org.id, name: 'faults', classes: ['*'], monthlyQuota: 1_000_000, rateLimitPerMinute: 1_000_000, expiresAt: null });
  key = created.key;
  keyId = created.record.id;
  orgId = org.id;
  [servicePort, inferencePort] = [await freePort(), await freePort()];
  await startInference();
  await startService();
});

after(async () => {
  if (summary.length > 0) {
    const cols: Array<[keyof Row, string]> = [
      ['fault', 'fault injected'], ['sent', 'requests sent'], ['ok200', '200'], ['fiveXx', '5xx'], ['lost', 'connection lost'],
      ['refunded', 'refunded'], ['chargeMismatch', 'charge mismatches'], ['lookupMismatch', 'lookup mismatches'], ['nonContract', 'non-contract answers'],
    ];
    const lines = [cols.map(([, h]) => h).join(' | '), cols.map(() => '---').join(' | '), ...summary.map((r) => cols.map(([k]) => String(r[k])).join(' | '))];
    process.stdout.write(`\nfault injection summary\n${lines.map((l) => `| ${l} |`).join('\n')}\n`);
  }
  await killChild(service);
  await killChild(inference);
  await db?.destroy();
  await images?.close();
  await redis?.destroy();
  await pg?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const opts = { skip: missing ?? false, timeout: 120_000 };

test('baseline: no fault', opts, async () => {
  await check('none (baseline)', await underLoad(() => sleep(1_500)));
});

test('PostgreSQL stopped and started again under load', opts, async () => {
  let readyWhileDown = 0;
  const answers = await underLoad(async () => {
    await sleep(1_000);
    await pg!.stop();
    // While it is away the service says so (its readiness fails); it recovers by itself after.
    readyWhileDown = (await fetch(`${base()}/readyz`)).status;
    await sleep(2_000);
    await pg!.start();
    await sleep(1_500);
  });
  const row = await check('PostgreSQL stop + start', answers);
  // While it was away the answers were 503 with Retry-After, never a bare 500.
  assert.equal(answers.filter((a) => a.status === 500).length, 0, JSON.stringify(answers.filter((a) => a.status === 500).slice(0, 2)));
  assert.ok(row.ok200 > 0);
  assert.equal(readyWhileDown, 503, '/readyz failed while PostgreSQL was down');
  await eventually(async () => (await fetch(`${base()}/readyz`)).status === 200, { what: 'readiness after the restart' });
});

test('Redis killed under load: everything still served', opts, async () => {
  const answers = await underLoad(async () => {
    await sleep(800);
    await redis!.kill();
    await sleep(2_000);
  });
  const row = await check('Redis SIGKILL', answers);
  assert.equal(row.fiveXx, 0, 'a Redis outage costs no request');
  const ready = await fetch(`${base()}/readyz`);
  assert.equal(ready.status, 200, 'still ready without Redis');
  assert.deepEqual(((await ready.json()) as { degraded: string[] }).degraded, ['limits']);
  await redis!.start();
});

test('inference backend killed mid-request, then back', opts, async () => {
  const answers = await underLoad(async () => {
    await sleep(800);
    await killChild(inference);
    await sleep(1_500);
    await startInference();
    await sleep(1_500);
  });
  await check('inference server SIGKILL + restart', answers);
  // Requests that ended ERROR while the backend was gone say why, and (checked above) were not charged.
  const errors = await db!('requests').where({ key_id: keyId, status: 'ERROR' }).whereNotNull('charge_month').whereNull('refunded_at');
  assert.deepEqual(errors.map((r: { error: string }) => r.error), [], 'every charged ERROR so far was the service\'s fault, so refunded');
});

test('the service killed with SIGKILL mid-batch and restarted', opts, async () => {
  const answers = await underLoad(async () => {
    await sleep(1_000);
    await killChild(service);
    await startService();
  }, 3, 2);
  // Charged equals delivered here too: admission charges in the transaction that writes the
  // row, and the restarted instance refunds what the killed one left unfinished.
  const row = await check('service SIGKILL + restart', answers);
  assert.ok(row.lost > 0, 'clients in flight lost their connection');
});

