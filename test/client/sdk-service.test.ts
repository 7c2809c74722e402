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

test('detection controls: max results, min confidence and classes narrow the answer; a replay keeps the stored one', async () => {
  const client = new RecognitionClient({ baseUrl, apiKey: (await t.newKey()).key });
  const image = new Uint8Array(readFixture('basketball1.png'));
  const all = await client.recognize({ externalId: 'ctl-all', image });
  const people = all.detections.filter((d) => d.label === 'person');
  assert.ok(people.length >= 2, `two people on basketball1.png: ${JSON.stringify(all.detections)}`);
  const [top, second] = [...new Set(all.detections.map((d) => d.confidence ?? 0))].sort((a, b) => b - a);

  const one = await client.recognize({ externalId: 'ctl-max', image, maxResults: 1 });
  assert.equal(one.detections.length, 1);
  assert.equal(one.detections[0].confidence, top, 'the most confident one');

  // Halfway between two scores, so that rounding on either side cannot move a detection across.
  const threshold = (top + second) / 2;
  const sure = await client.recognize({ externalId: 'ctl-min', image, minConfidence: threshold });
  assert.ok(sure.detections.length >= 1 && sure.detections.length < all.detections.length, JSON.stringify(sure.detections));
  assert.ok(sure.detections.every((d) => (d.confidence ?? 0) >= threshold));

  assert.deepEqual((await client.recognize({ externalId: 'ctl-absent', image, classes: ['zebra'] })).detections, []);
  const onlyPeople = await client.recognize({ externalId: 'ctl-person', image, classes: ['person'] });
  assert.equal(onlyPeople.detections.length, people.length);

  const replay = await client.recognize({ externalId: 'ctl-max', image, maxResults: 100, classes: ['zebra'] });
  assert.equal(replay.replayed, true);
  assert.deepEqual(replay.detections, one.detections, 'the stored result, whatever the new controls');

  const b = await client.batch([images.url('/images/camera.png'), images.url('/images/basketball1.png')], 'ctl-batch', { maxResults: 1, classes: ['person'] });
  assert.deepEqual(
    b.results.map((r) => [r.status, r.detections.length, r.detections[0]?.label]),
    [
      ['DONE', 1, 'person'],
      ['DONE', 1, 'person'],
    ],
    'the controls apply to every image',
  );
});

test('detection controls the server refuses surface as ApiError 400', async () => {
  const client = new RecognitionClient({ baseUrl, apiKey: (await t.newKey({ classes: ['person'] })).key });
  const image = new Uint8Array(readFixture('camera.png'));
  const refused = (e: unknown) => e instanceof ApiError && e.status === 400 && e.errorCode === 'INVALID_PARAMETERS';
  await assert.rejects(client.recognize({ externalId: 'bad-1', image, maxResults: 0 }), refused);
  await assert.rejects(client.recognize({ externalId: 'bad-2', image, minConfidence: 1.5 }), refused);
  await assert.rejects(client.recognize({ externalId: 'bad-3', image, classes: ['dog'] }), refused, 'a label the key cannot see');
  await assert.rejects(client.batch([images.url('/images/camera.png')], undefined, { maxResults: 101 }), refused);
  assert.equal((await client.recognize({ externalId: 'ok-1', image, classes: ['person'] })).status, 'DONE', 'within the key it is allowed');
});
