/**
 * The span tree of real requests on the real app, recorded by an in-memory exporter: the
 * SERVER span continues an incoming traceparent; auth, image fetch, detect (decode and
 * preprocess, inference), and database spans hang under it with correct parents.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

// Registered before the app exists: AsyncLocalStorage context manager + W3C propagator.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

let t: TestApp;
let images: ImageServer;
let key: TestKey;
const camera = readFixture('camera.png');

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
});
after(async () => {
  await images?.close();
  await t?.close();
  await provider.shutdown();
  trace.disable();
});
beforeEach(() => exporter.reset());

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

function parentOf(s: ReadableSpan): string | undefined {
  return s.parentSpanContext?.spanId;
}

function one(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  assert.equal(found.length, 1, `exactly one ${name} span (got ${spans.map((s) => s.name).join(', ')})`);
  return found[0];
}

/** Spans of the request are exported when they end; the server span ends in onResponse, after inject() resolves. */
async function settle(): Promise<ReadableSpan[]> {
  await eventually(() => exporter.getFinishedSpans().some((s) => s.kind === SpanKind.SERVER), { what: 'the server span', intervalMs: 10 });
  return exporter.getFinishedSpans();
}

test('sync base64: SERVER span continues traceparent; auth, detect → decode/preprocess + inference, db children', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key, traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    payload: { external_id: 'span-1', image_base64: camera.toString('base64') },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(json(res).status, 'DONE');
  const spans = await settle();

  for (const s of spans) assert.equal(s.spanContext().traceId, TRACE_ID, `${s.name} is in the caller's trace`);
  const server = one(spans, 'POST /v1/cv/requests/sync');
  assert.equal(server.kind, SpanKind.SERVER);
  assert.equal(parentOf(server), PARENT_ID, 'the server span continues the incoming traceparent');
  assert.equal(server.attributes['http.route'], '/v1/cv/requests/sync');
  assert.equal(server.attributes['http.response.status_code'], 200);
  const serverId = server.spanContext().spanId;

  const auth = one(spans, 'auth');
  assert.equal(parentOf(auth), serverId);
  const authId = auth.spanContext().spanId;
  const authDb = spans.filter((s) => s.name.startsWith('db ') && parentOf(s) === authId);
  assert.ok(authDb.length >= 1, 'the key lookup is a db span under auth');
  for (const s of authDb) {
    assert.equal(s.kind, SpanKind.CLIENT);
    assert.equal(s.attributes['db.system'], 'postgresql');
    assert.ok(!String(s.attributes['db.query.text']).includes(key.key), 'never the key in a query text');
  }

  const detect = one(spans, 'detect');
  assert.equal(parentOf(detect), serverId);
  const detectId = detect.spanContext().spanId;
  const decode = one(spans, 'image.decode_preprocess');
  const inference = one(spans, 'inference');
  const post = one(spans, 'postprocess');
  assert.equal(parentOf(decode), detectId);
  assert.equal(parentOf(inference), detectId);
  assert.equal(parentOf(post), detectId);
  assert.equal(inference.attributes['inference.backend'], 'onnxruntime');
  assert.equal(inference.attributes['inference.model'], 'centernet');
  assert.equal(inference.attributes['inference.batch_size'], 1);

  // request bookkeeping (admission, finish) runs under the server span
  const serverDb = spans.filter((s) => s.name.startsWith('db ') && parentOf(s) === serverId);
  const admission = serverDb.find((s) => s.name === 'db SELECT' && String(s.attributes['db.query.text']).includes('recognition_admit'));
  assert.ok(admission, `admission under the server span: ${serverDb.map((s) => s.name).join(', ')}`);
  assert.ok(serverDb.some((s) => s.name === 'db UPDATE'), 'the ending write under the server span');
  // the image storage write is a span of its own, under the server span
  const store = one(spans, 'image.store');
  assert.equal(parentOf(store), serverId);
  assert.ok(Number(store.attributes['image.bytes']) > 0);
  // Every span has its parent in this trace (or is the continued server span): no orphans.
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const s of spans) if (s !== server) assert.ok(ids.has(parentOf(s) ?? ''), `${s.name} has its parent in the tree`);
  assert.equal(spans.filter((s) => s.name === 'image.fetch').length, 0, 'no fetch for base64');
});

test('sync by URL: image.fetch is a CLIENT child of the server span; a new trace without traceparent', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: 'span-2', image_url: images.url('/images/camera.png') },
  });
  assert.equal(json(res).status, 'DONE', res.body);
  const spans = await settle();
  const server = one(spans, 'POST /v1/cv/requests/sync');
  assert.equal(parentOf(server), undefined, 'a root span when no traceparent came in');
  const fetch = one(spans, 'image.fetch');
  assert.equal(fetch.kind, SpanKind.CLIENT);
  assert.equal(parentOf(fetch), server.spanContext().spanId);
  assert.equal(fetch.attributes['image.bytes'], camera.length);
  assert.equal(fetch.attributes['http.response.status_code'], 200);
  for (const s of spans) for (const v of Object.values(s.attributes)) assert.ok(!String(v).includes('/images/camera.png'), `${s.name}: no URL path in attributes`);
});

test('a refused key: the auth span ends in error and nothing else runs', async () => {
  const res = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': 'cvk_not-a-real-key' }, payload: {} });
  assert.equal(res.statusCode, 401);
  const spans = await settle();
  const server = one(spans, 'POST /v1/cv/requests/sync');
  assert.equal(server.attributes['error.type'], 'INVALID_API_KEY');
  const auth = one(spans, 'auth');
  assert.equal(auth.status.code, 2 /* ERROR */);
  assert.equal(auth.status.message, 'INVALID_API_KEY');
  assert.equal(spans.filter((s) => s.name === 'detect').length, 0);
});

test('probes and scrapes are not traced', async () => {
  for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200);
  // A traced request after them: once its server span has ended, theirs would have too.
  await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': 'cvk_not-a-real-key' }, payload: {} });
  const spans = await settle();
  assert.deepEqual(spans.filter((s) => s.kind === SpanKind.SERVER).map((s) => s.name), ['POST /v1/cv/requests/sync']);
});

test('a lookup (GET, no body): auth ends before the handler, the repository read is under the server span', async () => {
  const made = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': key.key }, payload: { external_id: 'span-3', image_base64: camera.toString('base64') } });
  const id = json(made).request_id as string;
  await settle();
  exporter.reset();
  const res = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': key.key } });
  assert.equal(res.statusCode, 200);
  const spans = await settle();
  const server = one(spans, 'GET /v1/cv/requests/:id');
  const auth = one(spans, 'auth');
  assert.equal(auth.status.code, 0 /* UNSET: the guard let it through */);
  assert.equal(parentOf(auth), server.spanContext().spanId);
  const reads = spans.filter((s) => s.name === 'db SELECT' && parentOf(s) === server.spanContext().spanId);
  assert.ok(reads.length >= 1, 'findById runs in the handler, under the server span');
  for (const s of spans) assert.ok(!String(s.attributes['http.route'] ?? '').includes(id), 'the route template, not the id');
});
