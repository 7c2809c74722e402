/**
 * PostgreSQL going away under a running service (a private server, stopped and started
 * again): answers are 503 DATABASE_UNAVAILABLE with Retry-After (never a 500), /readyz
 * fails while it is gone and recovers by itself, and the pool serves again without a
 * restart of the service.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { buildApp, createServices, type Services } from '../../src/app.js';
import { createDb } from '../../src/store/db.js';
import { transientDbFault } from '../../src/store/db-faults.js';
import { createKey } from '../../src/store/keys.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { testConfig } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { privateServicesMissing, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-services.js';

const missing = await privateServicesMissing();

test('transient faults are told apart from errors a retry will not cure', () => {
  assert.deepEqual(transientDbFault({ code: 'ECONNREFUSED' }), { reason: 'unreachable', notApplied: true });
  assert.deepEqual(transientDbFault({ code: 'ECONNRESET' }), { reason: 'connection_lost', notApplied: false });
  assert.deepEqual(transientDbFault({ code: '57P01' }), { reason: 'shutdown', notApplied: false });
  assert.deepEqual(transientDbFault({ code: '53300' }), { reason: 'too_many_connections', notApplied: true });
  assert.deepEqual(transientDbFault({ code: '40001' }), { reason: 'serialization', notApplied: true });
  assert.deepEqual(transientDbFault({ code: '40P01' }), { reason: 'serialization', notApplied: true });
  assert.deepEqual(transientDbFault({ name: 'KnexTimeoutError', message: 'Knex: Timeout acquiring a connection' }), { reason: 'pool_timeout', notApplied: true });
  assert.deepEqual(transientDbFault(new Error('Connection terminated unexpectedly')), { reason: 'connection_lost', notApplied: false });
  // As knex rethrows it: the statement first.
  assert.deepEqual(transientDbFault(new Error('SELECT recognition_admit($1) AS r - Connection terminated unexpectedly')), { reason: 'connection_lost', notApplied: false });
  assert.deepEqual(transientDbFault(Object.assign(new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]), {})), { reason: 'unreachable', notApplied: true });
  assert.equal(transientDbFault({ code: '23505' }), null); // unique violation
  assert.equal(transientDbFault({ code: '42601' }), null); // syntax error
  assert.equal(transientDbFault(new Error('boom')), null);
});

let pg: PrivatePostgres | undefined;
let app: FastifyInstance;
let services: Services;
let db: Knex;
let dataDir: string;
let key: string;
let requestId: string;

before(async () => {
  if (missing) return;
  pg = await startPrivatePostgres();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-outage-'));
  const config = testConfig(pg.url, dataDir);
  // The driver's warnings about the outage we cause are expected: keep them out of the output.
  db = createDb(pg.url, { warn: () => {} });
  await migrateLatest(db);
  services = await createServices(config, db, { warn: () => {}, info: () => {} });
  app = await buildApp(services, { logger: false });
  await app.ready();
  const org = await createOrg(db, { name: 'outage', balance: null });
  const created = await createKey(db, { orgId: org.id, name: 'k', classes: ['*'], monthlyQuota: 1000, rateLimitPerMinute: 1000, expiresAt: null });
  key = created.key;
  const [row] = await db('requests')
    .insert({ key_id: created.record.id, org_id: org.id, kind: 'sync', external_id: 'x', status: 'DONE', source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:x' })
    .returning('id');
  requestId = row.id;
});

after(async () => {
  await app?.close();
  await services?.close();
  await db?.destroy();
  await pg?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('PostgreSQL stopped: 503 DATABASE_UNAVAILABLE with Retry-After and /readyz 503; started again: both recover without a restart', { skip: missing ?? false }, async () => {
  const lookup = () => app.inject({ method: 'GET', url: `/v1/cv/requests/${requestId}`, headers: { 'x-api-key': key } });
  assert.equal((await lookup()).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);

  await pg!.stop();
  const down = await lookup();
  assert.equal(down.statusCode, 503, down.body);
  assert.equal(down.headers['retry-after'], '2');
  const body = JSON.parse(down.body) as { error: string; error_code: string; message: string };
  assert.equal(body.error_code, 'DATABASE_UNAVAILABLE');
  assert.equal(body.error, 'Service Unavailable');
  assert.doesNotMatch(body.message, /ECONN|postgres|127\.0\.0\.1/i, 'no internal detail leaks');
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 503);
  assert.notEqual(JSON.parse(ready.body).checks.database, 'ok');
  const sync = await app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key },
    payload: { external_id: 'while-down', image_url: 'http://127.0.0.1:9/a.png' },
  });
  assert.equal(sync.statusCode, 503, sync.body);

  await pg!.start();
  await eventually(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, { what: '/readyz recovered' });
  assert.equal((await lookup()).statusCode, 200, 'the pool serves again');
});

test('a restart while requests are in flight: reads ride it out by retrying', { skip: missing ?? false }, async () => {
  const lookup = () => app.inject({ method: 'GET', url: `/v1/cv/requests/${requestId}`, headers: { 'x-api-key': key } });
  // Open pool connections first, so the restart breaks live connections (57P01 / terminated).
  await Promise.all(Array.from({ length: 5 }, lookup));
  const restart = (async () => {
    await pg!.stop();
    await pg!.start();
  })();
  const statuses: number[] = [];
  const loop = (async () => {
    let done = false;
    void restart.then(() => (done = true));
    while (!done) statuses.push((await lookup()).statusCode);
    for (let i = 0; i < 5; i++) statuses.push((await lookup()).statusCode);
  })();
  await Promise.all([restart, loop]);
  assert.ok(statuses.every((s) => s === 200 || s === 503), `only 200 or 503: ${[...new Set(statuses)].join(',')}`);
  assert.equal(statuses.at(-1), 200);
});
