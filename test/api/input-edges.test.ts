/**
 * Regressions from review: inputs that passed the schema and then failed deeper (500s), and
 * a batch whose refused URLs were charged against the quota of the accepted ones.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;
let key: TestKey;

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
});
after(async () => {
  await images?.close();
  await t?.close();
});

const URN = 'urn:uuid:3f1c2a4e-1b2c-4d5e-8f90-123456789abc';

test('a urn:uuid: request id is 400, not a database error', async () => {
  const lookup = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${URN}`, headers: { 'x-api-key': key.key } });
  assert.equal(lookup.statusCode, 400, lookup.body);
  assert.equal(json<any>(lookup).error_code, 'INVALID_REQUEST_ID');
  const feedback = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/feedback',
    headers: { 'x-api-key': key.key },
    payload: { request_id: URN, rating: 1 },
  });
  assert.equal(feedback.statusCode, 400, feedback.body);
});

test('C1 control characters in external_id are refused', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: 'x\u0085y', image_url: images.url('/images/camera.png') },
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(json<any>(res).error_code, 'INVALID_EXTERNAL_ID');
});

test('a batch URL with a NUL character is one FAILED entry, the others are processed', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': key.key },
    payload: { image_urls: [images.url('/images/a\u0000b.png'), images.url('/images/camera.png')] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = json<any>(res);
  assert.equal(body.results[0].status, 'FAILED');
  assert.equal(body.results[0].request_id, null);
  assert.match(body.results[0].error, /control characters/);
  assert.equal(body.results[1].status, 'DONE');
});

test('refused batch URLs do not use quota: one unit left still processes the one good image', async () => {
  const k = await t.newKey({ quota: 1 });
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': k.key },
    payload: { image_urls: ['ftp://images.example/a.png', images.url('/images/camera.png')] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = json<any>(res);
  assert.equal(body.results[0].status, 'FAILED');
  assert.equal(body.results[1].status, 'DONE');
  const next = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': k.key },
    payload: { image_urls: [images.url('/images/camera.png')] },
  });
  assert.equal(next.statusCode, 429, 'the quota of 1 is now used');
  assert.equal(json<any>(next).error_code, 'MONTHLY_QUOTA_EXCEEDED');
});
