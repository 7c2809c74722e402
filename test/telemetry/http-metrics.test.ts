/** /metrics after real traffic on the real app (PostgreSQL, model, loopback image server): series and values. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';
import { startMetricsServer } from '../../src/telemetry/metrics-server.js';

let t: TestApp;
let images: ImageServer;
let key: TestKey;
const basketball = readFixture('basketball1.png');
const camera = readFixture('camera.png');

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
});
after(async () => {
  await images?.close();
  await t?.close();
});

/** The value of one series line (exact labels, in the registry's order), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return res.body;
}

test('real traffic shows up in the series with the right labels and values', async () => {
  const sync = (body: object, headers: Record<string, string> = { 'x-api-key': key.key }) =>
    t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers, payload: body });

  const done = await sync({ external_id: 'metrics-1', image_base64: basketball.toString('base64') });
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(json(done).status, 'DONE');
  const replay = await sync({ external_id: 'metrics-1', image_base64: basketball.toString('base64') });
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  const byUrl = await sync({ external_id: 'metrics-2', image_url: images.url('/images/camera.png') });
  assert.equal(json(byUrl).status, 'DONE', byUrl.body);
  const failedDownload = await sync({ external_id: 'metrics-3', image_url: images.url('/status/404') });
  assert.equal(json(failedDownload).status, 'ERROR', failedDownload.body);
  assert.equal((await sync({ external_id: 'metrics-4', image_base64: 'x' }, {})).statusCode, 401);
  assert.equal((await sync({ external_id: 'metrics-5' })).statusCode, 400);
  const id = json(done).request_id as string;
  const lookup = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': key.key } });
  assert.equal(lookup.statusCode, 200);
  assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode, 404);
  const batch = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': key.key },
    payload: { image_urls: [images.url('/images/camera.png'), images.url('/images/basketball1.png')] },
  });
  assert.equal(batch.statusCode, 200, batch.body);

  const text = await scrape();
  const http = (method: string, route: string, status: number) =>
    sample(text, `http_request_duration_seconds_count{method="${method}",route="${route}",status_code="${status}"}`);
  assert.equal(http('POST', '/v1/cv/requests/sync', 200), 4);
  assert.equal(http('POST', '/v1/cv/requests/sync', 401), 1);
  assert.equal(http('POST', '/v1/cv/requests/sync', 400), 1);
  // the route template, never the request id
  assert.equal(http('GET', '/v1/cv/requests/:id', 200), 1);
  assert.equal(http('GET', 'unmatched', 404), 1);
  assert.equal(http('POST', '/v1/cv/requests/batch', 200), 1);
  assert.ok(!text.includes(id), 'no request id in any label');
  assert.ok(!text.includes(key.key) && !text.includes(key.key.slice(0, 12)), 'no key in any label');
  assert.ok(!text.includes('metrics-1'), 'no external_id in any label');
  assert.ok(!text.includes('127.0.0.1'), 'no URL in any label');
  // every bucket of a histogram is cumulative: +Inf equals the count
  assert.equal(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/cv/requests/sync",status_code="200"}'), 4);

  assert.equal(sample(text, 'recognitions_total{outcome="DONE",mode="sync"}'), 2);
  assert.equal(sample(text, 'recognitions_total{outcome="ERROR",mode="sync"}'), 1);
  assert.equal(sample(text, 'recognitions_total{outcome="replay",mode="sync"}'), 1);
  assert.equal(sample(text, 'recognitions_total{outcome="DONE",mode="batch"}'), 2);
  assert.equal(sample(text, 'batch_images_count'), 1);
  assert.equal(sample(text, 'batch_images_sum'), 2);

  assert.equal(sample(text, 'rejections_total{reason="auth"}'), 1);
  assert.equal(sample(text, 'rejections_total{reason="validation"}'), 1);
  assert.equal(sample(text, 'rejections_total{reason="rate_limit"}'), undefined);

  // basketball (sync), camera (sync by URL), camera + basketball (batch): four model runs
  assert.equal(sample(text, 'inference_duration_seconds_count{backend="onnxruntime",model="centernet"}'), 4);
  assert.ok(sample(text, 'inference_duration_seconds_sum{backend="onnxruntime",model="centernet"}')! > 0);

  assert.equal(sample(text, 'image_download_duration_seconds_count{result="ok"}'), 3);
  assert.equal(sample(text, 'image_download_duration_seconds_count{result="error"}'), 1);
  assert.equal(sample(text, 'image_download_bytes_count'), 3);
  assert.equal(sample(text, 'image_download_bytes_sum'), camera.length * 2 + basketball.length);

  // the scrape itself is in flight while the registry is read
  assert.equal(sample(text, 'http_requests_in_flight'), 1);
  assert.equal(sample(text, 'limiter_degraded'), 0);
  const free = sample(text, 'db_pool_connections{state="free"}');
  const used = sample(text, 'db_pool_connections{state="used"}');
  assert.ok(free !== undefined && free >= 1, `free connections after traffic: ${free}`);
  assert.ok(used !== undefined && used >= 0);
  assert.equal(sample(text, 'db_pool_connections{state="pending"}'), 0);
  assert.ok(sample(text, 'process_resident_memory_bytes')! > 0, 'process default metrics');
  assert.equal(sample(text, 'triton_grpc_errors_total'), undefined, 'no Triton in this setup');
});

test('rate limit, quota and balance refusals are counted by reason', async () => {
  const limited = await t.newKey({ rateLimit: 1 });
  const noQuota = await t.newKey({ quota: 0 });
  const broke = await t.newKey({ balance: 0 });
  const before = await scrape();
  const call = (k: TestKey, externalId: string) =>
    t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': k.key }, payload: { external_id: externalId, image_base64: camera.toString('base64') } });
  assert.equal((await call(limited, 'r-1')).statusCode, 200);
  assert.equal((await call(limited, 'r-2')).statusCode, 429);
  assert.equal((await call(noQuota, 'q-1')).statusCode, 429);
  assert.equal((await call(broke, 'b-1')).statusCode, 402);
  const after = await scrape();
  const delta = (reason: string) =>
    (sample(after, `rejections_total{reason="${reason}"}`) ?? 0) - (sample(before, `rejections_total{reason="${reason}"}`) ?? 0);
  assert.equal(delta('rate_limit'), 1);
  assert.equal(delta('quota'), 1);
  assert.equal(delta('balance'), 1);
  assert.equal(delta('auth'), 0);
});

test('quota and balance refusals are counted per organisation, only for the organisation refused', async () => {
  const noQuota = await t.newKey({ quota: 0 });
  const broke = await t.newKey({ balance: 0 });
  const call = (k: TestKey, externalId: string) =>
    t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': k.key }, payload: { external_id: externalId, image_base64: camera.toString('base64') } });
  assert.equal((await call(noQuota, 'oq-1')).statusCode, 429);
  assert.equal((await call(noQuota, 'oq-2')).statusCode, 429);
  assert.equal((await call(broke, 'ob-1')).statusCode, 402);
  assert.equal((await call(key, 'ok-1')).statusCode, 200);
  const text = await scrape();
  const series = (org: string, limit: string) => sample(text, `organisation_limit_rejections_total{organisation="${org}",limit="${limit}"}`);
  assert.equal(series(noQuota.orgId, 'quota'), 2);
  assert.equal(series(noQuota.orgId, 'balance'), undefined);
  assert.equal(series(broke.orgId, 'balance'), 1);
  assert.equal(series(key.orgId, 'quota'), undefined, 'an organisation within its limits has no series');
});

test('refused signed image links are counted as expired or invalid', async () => {
  const signer = t.app.images.signer;
  const id = '7a0c7f4e-2b7d-4c39-9a51-3f1f0c2d9e11';
  const failures = async () => {
    const text = await scrape();
    return { expired: sample(text, 'image_url_signature_failures_total{reason="expired"}') ?? 0, invalid: sample(text, 'image_url_signature_failures_total{reason="invalid"}') ?? 0 };
  };
  const get = async (link: string) => (await t.app.inject({ method: 'GET', url: new URL(link).pathname + new URL(link).search })).statusCode;
  const before = await failures();
  // A link we signed two days ago: authentic, but past its expiry.
  const stale = signer.sign(id, new Date(Date.now() - 2 * 86_400_000 - t.config.imageUrlTtlSeconds * 1000));
  assert.equal(await get(stale), 403);
  // A link signed with another secret (a replica with a different IMAGE_URL_SECRET).
  const fresh = new URL(signer.sign(id));
  const other = fresh.searchParams.get('signature')!.startsWith('A') ? 'B' : 'A';
  fresh.searchParams.set('signature', other + fresh.searchParams.get('signature')!.slice(1));
  assert.equal(await get(fresh.toString()), 403);
  assert.equal(await get(`http://cv.test/v1/cv/images/${id}`), 403, 'no signature at all');
  // A valid link to an image that does not exist is not a signature failure.
  assert.equal(await get(signer.sign(id)), 404);
  const after = await failures();
  assert.deepEqual({ expired: after.expired - before.expired, invalid: after.invalid - before.invalid }, { expired: 1, invalid: 2 });
});

test('METRICS_PORT: the same registry on a separate server that serves only /metrics', async () => {
  const server = await startMetricsServer(t.services.metrics, { port: 0, host: '127.0.0.1' });
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok((sample(text, 'http_request_duration_seconds_count{method="POST",route="/v1/cv/requests/sync",status_code="200"}') ?? 0) >= 4);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/v1/cv/requests/sync`, { method: 'POST' })).status, 404);
  } finally {
    await server.close();
  }
});

test('a client that hangs up mid-request does not leave the in-flight gauge up', async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as { port: number };
  const controller = new AbortController();
  const call = fetch(`http://127.0.0.1:${port}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify({ external_id: 'metrics-abort', image_url: images.url('/slow?ms=1500') }),
    signal: controller.signal,
  });
  // wait until the request is being processed, then hang up
  await eventually(async () => sample(await scrape(), 'http_requests_in_flight') === 2, { what: 'the sync request and the scrape in flight', intervalMs: 20 });
  controller.abort();
  await assert.rejects(call);
  await eventually(async () => sample(await scrape(), 'http_requests_in_flight') === 1, { what: 'only the scrape itself in flight once the client has hung up', intervalMs: 20 });
  const text = await scrape();
  assert.equal(sample(text, 'http_request_duration_seconds_count{method="POST",route="/v1/cv/requests/sync",status_code="499"}'), 1, 'recorded as 499 client closed request');
});
