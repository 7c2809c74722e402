/** /openapi.json agrees with the error catalogue and the spec; /docs, /healthz, /readyz. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/api/errors.js';
import { OPERATION_ERRORS } from '../../src/api/routes/recognition.js';
import { CONSOLE_ERRORS } from '../../src/console/context.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';

let t: TestApp;
let doc: any;

before(async () => {
  t = await buildTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = json(res);
});
after(async () => {
  await t?.close();
});

const OPERATIONS: Record<string, [string, string]> = {
  createSyncCvRequest: ['post', '/v1/cv/requests/sync'],
  createBatchCvRequest: ['post', '/v1/cv/requests/batch'],
  getRequest: ['get', '/v1/cv/requests/{id}'],
  submitFeedback: ['post', '/v1/cv/feedback'],
};

test('OpenAPI 3.1 with the four operations, their operationIds, the tag and the apiKey scheme', () => {
  assert.match(doc.openapi, /^3\.1\./);
  assert.equal(doc.info.version, '1.0.0');
  assert.deepEqual(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' });
  // the console API has its own tag and test (test/console/console-api.test.ts)
  const publicPaths = Object.entries(doc.paths).filter(([p]) => !p.startsWith('/console/'));
  const ops = publicPaths.flatMap(([p, item]: [string, any]) => Object.entries(item).map(([m, op]: [string, any]) => [op.operationId, m, p]));
  assert.deepEqual(ops.map((o) => o[0]).sort(), Object.keys(OPERATIONS).sort(), 'exactly the four public operations');
  for (const [id, [method, p]] of Object.entries(OPERATIONS)) {
    const op = doc.paths[p][method];
    assert.equal(op.operationId, id);
    assert.deepEqual(op.tags, ['Computer Vision']);
    assert.deepEqual(op.security, [{ apiKey: [] }]);
  }
  for (const name of ['CVResult', 'Detection', 'BoundingBox', 'BatchCVResult', 'BatchImageResult']) assert.ok(doc.components.schemas[name], name);
});

// The document is generated from OPERATION_ERRORS, so comparing the two proved nothing:
// test/api/openapi-responses.test.ts validates real answers against the document instead.

test('the spec table statuses are all documented', () => {
  const want: Record<string, number[]> = {
    createSyncCvRequest: [200, 400, 401, 403, 408, 429, 500],
    createBatchCvRequest: [200, 400, 401, 402, 403, 429, 500],
    getRequest: [200, 400, 403, 404],
    submitFeedback: [200, 400, 401, 404, 500],
  };
  for (const [id, statuses] of Object.entries(want)) {
    const [method, p] = OPERATIONS[id];
    for (const s of statuses) assert.ok(doc.paths[p][method].responses[String(s)], `${id} ${s}`);
  }
});

test('every catalogue code is used by an operation or is an operational one, and the docs list them all', () => {
  // Operational, or protocol-level refusals any path can get (before its route is known).
  const operational = new Set<ErrorCode>(['ROUTE_NOT_FOUND', 'INVALID_IMAGE_SIGNATURE', 'IMAGE_NOT_FOUND', 'IMAGE_EXPIRED', 'IMAGE_STORE_UNAVAILABLE', 'NOT_READY', 'METHOD_NOT_ALLOWED', 'MALFORMED_REQUEST', 'CLIENT_TIMEOUT', 'HEADERS_TOO_LARGE']);
  const used = new Set<ErrorCode>([...Object.values(OPERATION_ERRORS).flat(), ...CONSOLE_ERRORS]);
  const docs = readFileSync(path.join(REPO_ROOT, 'docs/api.md'), 'utf8');
  for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
    assert.ok(used.has(code) || operational.has(code), `${code} is used`);
    assert.ok(docs.includes(code), `docs/api.md lists ${code}`);
  }
});

test('/docs serves the reference UI; unknown routes get a catalogue 404', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /html/);
  const miss = await t.app.inject({ method: 'GET', url: '/nope' });
  assert.equal(miss.statusCode, 404);
  assert.equal(json(miss).error_code, 'ROUTE_NOT_FOUND');
});

test('/healthz and /readyz (database, limits, inference); 503 with the reason when one fails', async () => {
  assert.deepEqual(json(await t.app.inject({ method: 'GET', url: '/healthz' })), { status: 'ok' });
  const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);
  assert.deepEqual(json(ready).checks, { database: 'ok', limits: 'ok', inference: 'ok' });

  const other = await buildTestApp();
  try {
    await other.services.backend.close();
    const res = await other.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    const body = json<any>(res);
    assert.equal(body.error_code, 'NOT_READY');
    assert.equal(body.error, 'Service Unavailable');
    assert.match(body.message, /inference/);
    assert.notEqual(body.checks.inference, 'ok');
  } finally {
    await other.close();
  }
});
