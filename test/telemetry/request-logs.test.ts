/**
 * Logs of the real app (the service's pino options, captured): one JSON line per request with
 * trace id, request id, key prefix, organisation, route, status and duration; never the key,
 * never the image bytes, on success, validation failures and error logs alike.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { buildApp, createServices, type Services } from '../../src/app.js';
import { createDb } from '../../src/store/db.js';
import { createKey } from '../../src/store/keys.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { REDACTED, redactUrlSecrets } from '../../src/telemetry/logging.js';
import { testConfig } from '../helpers/app.js';
import { capturedLogger } from '../helpers/log-capture.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer } from '../helpers/image-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

const { logger, lines } = capturedLogger('debug');

let database: TestDatabase;
let db: Knex;
let services: Services;
let app: FastifyInstance;
let dataDir: string;
let key: string;
let orgId: string;
const camera = readFixture('camera.png');
const cameraBase64 = camera.toString('base64');

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-logs-'));
  const config = testConfig(database.url, dataDir, { LOG_LEVEL: 'debug' });
  db = createDb(database.url);
  await migrateLatest(db);
  services = await createServices(config, db, logger);
  app = await buildApp(services, { loggerInstance: logger, sweepAbandoned: false });
  await app.ready();
  const org = await createOrg(db, { name: `logs-${process.pid}`, balance: null });
  orgId = org.id;
  key = (await createKey(db, { orgId, name: 'logs', classes: ['*'], monthlyQuota: 100, rateLimitPerMinute: 100, expiresAt: null })).key;
});
after(async () => {
  await app?.close();
  await services?.close();
  await db?.destroy();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function parsed(): Array<Record<string, unknown>> {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

function assertNoSecrets(): void {
  const all = lines.join('\n');
  assert.ok(!all.includes(key), 'the API key never appears');
  assert.ok(!all.includes(key.slice(12)), 'not even the secret part of the key');
  assert.ok(!all.includes(cameraBase64.slice(100, 160)), 'no image bytes');
}

test('one request line per request with the documented fields; neither the key nor the image', async () => {
  lines.length = 0;
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const res = await app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    payload: { external_id: 'logs-1', image_base64: cameraBase64 },
  });
  assert.equal(res.statusCode, 200, res.body);
  const requestLines = parsed().filter((l) => l.msg === 'request');
  assert.equal(requestLines.length, 1, `one line per request: ${lines.join('\n')}`);
  const line = requestLines[0];
  assert.equal(line.level, 30);
  assert.equal(line.service, 'recognition-service');
  // tracing is off here (no SDK), yet the caller's trace id is kept for correlation
  assert.equal(line.trace_id, traceId);
  assert.match(String(line.request_id), /^[0-9a-f-]{36}$/);
  assert.equal(line.key_prefix, key.slice(0, 12));
  assert.equal(line.org_id, orgId);
  assert.equal(line.method, 'POST');
  assert.equal(line.route, '/v1/cv/requests/sync');
  assert.equal(line.status_code, 200);
  assert.ok(typeof line.duration_ms === 'number' && line.duration_ms > 0);
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
  assertNoSecrets();
});

test('validation failures and refused keys: logged with their error code, still without key or image', async () => {
  lines.length = 0;
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key },
    // both image fields: refused by validation with the image bytes in the body
    payload: { external_id: 'logs-2', image_base64: cameraBase64, image_url: 'http://127.0.0.1/x.png' },
  });
  assert.equal(bad.statusCode, 400);
  const unknown = await app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': `${key}x` }, payload: { external_id: 'logs-3', image_base64: cameraBase64 } });
  assert.equal(unknown.statusCode, 401);
  const notJson = await app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: `{"external_id":"logs-4","image_base64":"${cameraBase64}"`,
  });
  assert.equal(notJson.statusCode, 400);
  const requestLines = parsed().filter((l) => l.msg === 'request');
  assert.deepEqual(requestLines.map((l) => [l.status_code, l.error_code]), [[400, 'INVALID_PARAMETERS'], [401, 'INVALID_API_KEY'], [400, 'INVALID_PARAMETERS']]);
  assert.equal(requestLines[1].key_prefix, undefined, 'no prefix of a key that is not ours');
  assertNoSecrets();
});

test('error logs that carry a request, headers or a body are redacted', () => {
  lines.length = 0;
  logger.error(
    {
      err: Object.assign(new Error('boom'), { body: { image_base64: cameraBase64 } }),
      req: { headers: { 'x-api-key': key, cookie: `__Host-rc_access=${key}` }, body: { image_base64: cameraBase64 } },
      headers: { 'x-api-key': key },
      input: { image_base64: cameraBase64, apiKey: key },
    },
    'request failed',
  );
  assert.equal(lines.length, 1);
  const line = parsed()[0] as { req: { headers: Record<string, string>; body: Record<string, string> }; input: Record<string, string> };
  assert.equal(line.req.headers['x-api-key'], REDACTED);
  assert.equal(line.req.headers.cookie, REDACTED, 'console session cookies');
  assert.equal(line.req.body.image_base64, REDACTED);
  assert.equal(line.input.image_base64, REDACTED);
  assert.equal(line.input.apiKey, REDACTED);
  assertNoSecrets();
});

test('probes are logged at debug only', async () => {
  lines.length = 0;
  await app.inject({ method: 'GET', url: '/healthz' });
  const probe = parsed().filter((l) => l.msg === 'request');
  assert.equal(probe.length, 1);
  assert.equal(probe[0].level, 20);
  assert.equal(probe[0].route, '/healthz');
});

// Signed links carry their credential in the query: the API's own `signature`, a presigned
// S3 link's X-Amz-Signature, X-Amz-Credential and X-Amz-Security-Token. Whoever reads the log
// must not be able to open the image (or, with a session token, more of the bucket).
const SIGNED_SECRETS = ['SIGNATURE-SECRET-1', 'AMZ-SIGNATURE-SECRET', 'AKIA-CREDENTIAL-SECRET', 'SESSION-TOKEN-SECRET'];
const signedQuery = (prefix = '?') =>
  `${prefix}expires=1900000000&signature=${SIGNED_SECRETS[0]}&X-Amz-Signature=${SIGNED_SECRETS[1]}` +
  `&X-Amz-Credential=${SIGNED_SECRETS[2]}%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&x-amz-security-token=${SIGNED_SECRETS[3]}&X-Amz-Expires=604800`;

function assertNoSignedSecrets(): void {
  const all = lines.join('\n');
  for (const secret of SIGNED_SECRETS) assert.ok(!all.includes(secret), `${secret} is in the log:\n${all}`);
}

test('the signature, X-Amz-Signature, X-Amz-Credential and X-Amz-Security-Token of any URL in any line are redacted', async () => {
  lines.length = 0;
  const images = await startImageServer();
  try {
    // an image link (the signature is its credential), an unknown route, a download that fails
    await app.inject({ method: 'GET', url: `/v1/cv/images/00000000-0000-4000-8000-000000000000${signedQuery()}` });
    await app.inject({ method: 'GET', url: `/v1/cv/no-such-route${signedQuery()}` });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': key },
      payload: { external_id: 'logs-signed', image_url: `${images.url('/status/404')}${signedQuery()}` },
    });
    assert.ok(res.statusCode < 500, res.body);
  } finally {
    await images.close();
  }
  // whatever else logs a URL: a field, a request, an error message, an encoded URL inside a URL
  const url = `https://bucket.s3.amazonaws.com/images/ab/x${signedQuery()}`;
  logger.info({ url, req: { method: 'GET', url: `/v1/cv/images/x${signedQuery()}` }, nested: { image_url: url } }, 'a line with URLs');
  logger.error({ err: new Error(`could not fetch ${url}`) }, 'request failed');
  logger.warn({ next: `https://cv.example/redirect?to=${encodeURIComponent(url)}` }, 'encoded');
  logger.info(`a message with ${url}`);
  assertNoSignedSecrets();
  const line = parsed().find((l) => l.msg === 'a line with URLs') as { url: string; req: { url: string } };
  assert.ok(line, lines.join('\n'));
  // the rest of the URL stays readable: host, path, expiry, and which parameters were there
  assert.equal(
    line.url,
    `https://bucket.s3.amazonaws.com/images/ab/x?expires=1900000000&signature=${REDACTED}&X-Amz-Signature=${REDACTED}` +
      `&X-Amz-Credential=${REDACTED}&x-amz-security-token=${REDACTED}&X-Amz-Expires=604800`,
  );
  assert.match(line.req.url, /^\/v1\/cv\/images\/x\?expires=1900000000&signature=\[redacted\]&/);
});

test('redactUrlSecrets leaves other text alone', () => {
  for (const text of ['no url here', 'https://example.com/a.png?expires=1&size=2', 'signature=abc without a query', 'https://example.com/?designature=1']) {
    assert.equal(redactUrlSecrets(text), text);
  }
  assert.equal(redactUrlSecrets('https://x.test/a?Signature=abc#frag'), `https://x.test/a?Signature=${REDACTED}#frag`);
});
