/**
 * Which failures the SDK retries, over real HTTP against a local server that answers from a
 * script (the real service cannot be made to answer 503-then-200 on demand). The rule under
 * test: a retry never risks doing (and charging) the work twice.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { ApiError, RecognitionClient, TransportError } from '@recognition-service/client';

interface Scripted {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Cut the connection instead of answering. */
  destroy?: boolean;
  /** Answer after this many ms. */
  delayMs?: number;
}

const DONE = { success: true, request_id: '3b52482a-6374-42ae-bbb7-f3d901ac7aa9', external_id: 'e1', status: 'DONE', results: [] };
const BATCH = { success: true, total_images: 1, results: [{ image_url: 'http://x/1.png', request_id: null, status: 'FAILED', success: false, error: 'x', results: [] }] };
const err = (status: number, code: string, headers?: Record<string, string>): Scripted => ({ status, body: { error: 'e', message: `m ${code}`, error_code: code }, headers });

const servers: http.Server[] = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

async function scripted(script: Scripted[]): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      const step = script.shift() ?? { status: 599 };
      setTimeout(() => {
        if (step.destroy) return req.socket.destroy();
        res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
        res.end(step.body === undefined ? '' : JSON.stringify(step.body));
      }, step.delayMs ?? 0);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

function client(url: string, delays: number[] = [], extra: Partial<ConstructorParameters<typeof RecognitionClient>[0]> = {}) {
  return new RecognitionClient({ baseUrl: url, apiKey: 'cvk_test', maxRetries: 3, onRetry: (i) => delays.push(i.delayMs), ...extra });
}

test('sync: 5xx, a cut connection and 409 in progress are retried with the very same body', async () => {
  const s = await scripted([err(503, 'SERVICE_UNAVAILABLE'), { status: 0, destroy: true }, err(409, 'REQUEST_IN_PROGRESS'), { status: 200, body: DONE }]);
  const r = await client(s.url).recognize({ externalId: 'e1', imageUrl: 'http://img/1.png' });
  assert.equal(r.status, 'DONE');
  assert.equal(s.bodies.length, 4);
  assert.ok(s.bodies.every((b) => b === s.bodies[0]), 'every attempt sent the same external_id and image');
  assert.deepEqual(JSON.parse(s.bodies[0]), { external_id: 'e1', image_url: 'http://img/1.png' });
});

test('429 waits for Retry-After; a spent monthly quota is not retried', async () => {
  const delays: number[] = [];
  const s = await scripted([err(429, 'RATE_LIMITED', { 'retry-after': '1' }), { status: 200, body: DONE }]);
  await client(s.url, delays).recognize({ externalId: 'e1', imageUrl: 'http://img/1.png' });
  assert.deepEqual(delays, [1000]);

  const q = await scripted([err(429, 'MONTHLY_QUOTA_EXCEEDED', { 'retry-after': '3600' }), { status: 200, body: DONE }]);
  await assert.rejects(client(q.url).recognize({ externalId: 'e1', imageUrl: 'http://img/1.png' }), (e: unknown) => e instanceof ApiError && e.status === 429 && e.errorCode === 'MONTHLY_QUOTA_EXCEEDED' && e.retryAfterSeconds === 3600);
  assert.equal(q.bodies.length, 1);
});

test('a Retry-After longer than the limit is thrown, not waited out', async () => {
  const s = await scripted([err(429, 'RATE_LIMITED', { 'retry-after': '120' })]);
  await assert.rejects(client(s.url, [], { maxRetryAfterSeconds: 60 }).recognize({ externalId: 'e', imageUrl: 'http://i/1.png' }), (e: unknown) => e instanceof ApiError && e.retryAfterSeconds === 120);
  assert.equal(s.bodies.length, 1);
});

test('batch: never resent after a 500 or a cut connection (it could charge twice), resent after 429', async () => {
  const s500 = await scripted([err(500, 'INTERNAL_ERROR'), { status: 200, body: BATCH }]);
  await assert.rejects(client(s500.url).batch(['http://x/1.png']), (e: unknown) => e instanceof ApiError && e.status === 500);
  assert.equal(s500.bodies.length, 1);

  const cut = await scripted([{ status: 0, destroy: true }, { status: 200, body: BATCH }]);
  await assert.rejects(client(cut.url).batch(['http://x/1.png']), (e: unknown) => e instanceof TransportError && e.kind === 'network');
  assert.equal(cut.bodies.length, 1);

  const limited = await scripted([err(429, 'RATE_LIMITED', { 'retry-after': '0' }), { status: 200, body: BATCH }]);
  const b = await client(limited.url).batch(['http://x/1.png']);
  assert.equal(b.totalImages, 1);
  assert.equal(limited.bodies.length, 2);
});

test('batch: a refused connection (nothing sent) is retried', async () => {
  const s = await scripted([]);
  const port = Number(new URL(s.url).port);
  await new Promise((r) => servers.pop()!.close(r));
  const retries: number[] = [];
  await assert.rejects(client(`http://127.0.0.1:${port}`, retries, { maxRetries: 2 }).batch(['http://x/1.png']), (e: unknown) => e instanceof TransportError && e.kind === 'network' && /ECONNREFUSED/.test(e.message));
  assert.equal(retries.length, 2, 'both retries were tried');
});

test('4xx other than 409/429 is thrown at once with its error_code', async () => {
  const s = await scripted([err(400, 'INVALID_IMAGE_URL')]);
  await assert.rejects(client(s.url).recognize({ externalId: 'e', imageUrl: 'ftp://x' }), (e: unknown) => e instanceof ApiError && e.status === 400 && e.errorCode === 'INVALID_IMAGE_URL' && e.message === 'm INVALID_IMAGE_URL');
  assert.equal(s.bodies.length, 1);
});

test('timeouts per attempt and the caller\'s AbortSignal', async () => {
  const slow = await scripted([{ status: 200, body: DONE, delayMs: 2000 }]);
  await assert.rejects(client(slow.url, [], { timeoutMs: 100, maxRetries: 0 }).recognize({ externalId: 'e', imageUrl: 'http://i/1.png' }), (e: unknown) => e instanceof TransportError && e.kind === 'timeout');

  const slow2 = await scripted([{ status: 200, body: DONE, delayMs: 2000 }, { status: 200, body: DONE }]);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(client(slow2.url).recognize({ externalId: 'e', imageUrl: 'http://i/1.png' }, { signal: controller.signal }), (e: unknown) => e instanceof TransportError && e.kind === 'aborted');
  assert.equal(slow2.bodies.length, 1, 'an abort is never retried');
});
