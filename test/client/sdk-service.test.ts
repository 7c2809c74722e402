/** The SDK against the real service: real PostgreSQL, the real model, real HTTP. */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ApiError, RecognitionClient } from '@recognition-service/client';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let key: TestKey;
let images: ImageServer;
let baseUrl: string;

before(async () => {
  t = await buildTestApp();
  key = await t.newKey();
  images = await startImageServer();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await images.close();
  await t.close();
});

test('recognize bytes: a person on basketball1.png; the same id again is a replay', async () => {
  const client = new RecognitionClient({ baseUrl, apiKey: key.key });
  const image = new Uint8Array(readFixture('basketball1.png'));
  const first = await client.recognize({ externalId: 'sdk-1', image });
  assert.equal(first.status, 'DONE');
  assert.equal(first.replayed, false);
  assert.ok(first.detections.some((d) => d.label === 'person' && d.productId === 'coco:1'), JSON.stringify(first.detections));
  assert.ok(client.lastRateLimit.limit !== undefined && client.lastRateLimit.remaining !== undefined);
  const again = await client.recognize({ externalId: 'sdk-1', image });
  assert.equal(again.replayed, true);
  assert.equal(again.requestId, first.requestId);

  const looked = await client.getRequest(first.requestId);
  assert.deepEqual(looked.detections, first.detections);
  const fb = await client.feedback(first.requestId, 1);
  assert.equal(fb.rating, 1);
  const used = await t.db('key_usage').where({ key_id: key.id }).sum({ n: 'used' }).first();
  assert.equal(Number(used?.n), 1, 'the replay was not charged');
});

test('batch with URLs: one good image, one missing, each on its own', async () => {
  const client = new RecognitionClient({ baseUrl, apiKey: key.key });
  const b = await client.batch([images.url('/images/camera.png'), images.url('/status/404')], 'sdk-batch');
  assert.equal(b.totalImages, 2);
  assert.equal(b.results[0].status, 'DONE');
  assert.ok(b.results[0].detections.some((d) => d.label === 'person'));
  assert.equal(b.results[1].status, 'FAILED');
  assert.ok(b.results[1].error);
});

test('errors are typed with status, error_code and Retry-After', async () => {
  await assert.rejects(
    new RecognitionClient({ baseUrl, apiKey: 'cvk_not_a_real_key_000000000000000000000000' }).recognize({ externalId: 'x', image: new Uint8Array(readFixture('camera.png')) }),
    (e: unknown) => e instanceof ApiError && e.status === 401 && e.errorCode === 'INVALID_API_KEY',
  );
  const limited = await t.newKey({ rateLimit: 1 });
  const client = new RecognitionClient({ baseUrl, apiKey: limited.key, maxRetryAfterSeconds: 0 });
  await client.recognize({ externalId: 'r1', image: new Uint8Array(readFixture('squirrel_cls.jpg')) });
  await assert.rejects(client.recognize({ externalId: 'r2', image: new Uint8Array(readFixture('squirrel_cls.jpg')) }), (e: unknown) => e instanceof ApiError && e.status === 429 && e.errorCode === 'RATE_LIMITED' && (e.retryAfterSeconds ?? 0) > 0);
  await assert.rejects(client.getRequest('not-a-uuid'), TypeError);
});
