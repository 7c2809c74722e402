/** The sync deadline (SYNC_TIMEOUT_MS): 408 with external_id, the record ends ERROR. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;

before(async () => {
  t = await buildTestApp({ SYNC_TIMEOUT_MS: '800' });
  images = await startImageServer();
});
after(async () => {
  await images?.close();
  await t?.close();
});

test('408 Request Timeout PROCESSING_TIMEOUT with external_id; record ERROR "processing timed out"', async () => {
  const k = await t.newKey();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key },
    payload: { external_id: 'too-slow', image_url: images.url('/slow?ms=5000') },
  });
  assert.equal(res.statusCode, 408, res.body);
  const body = json(res);
  assert.deepEqual(body, { error: 'Request Timeout', message: body.message, error_code: 'PROCESSING_TIMEOUT', external_id: 'too-slow' });
  assert.match(body.message as string, /timed out/);
  const row = await t.db('requests').where({ key_id: k.id, external_id: 'too-slow' }).first();
  assert.equal(row.status, 'ERROR');
  assert.equal(row.error, 'processing timed out');
  assert.equal(row.response_code, 408);
  assert.ok(row.finished_at instanceof Date);

  const lookup = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${row.id}`, headers: { 'x-api-key': k.key } });
  assert.equal(json(lookup).status, 'ERROR');
  assert.equal(json(lookup).error, 'processing timed out');

  // A timed-out request is an ERROR: the same external_id runs again.
  const retry = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key },
    payload: { external_id: 'too-slow', image_url: images.url('/slow?ms=5000') },
  });
  assert.equal(retry.statusCode, 408, retry.body);
  assert.equal((await t.db('requests').where({ key_id: k.id, external_id: 'too-slow' })).length, 2, 'the retry is a new request');
});

test('batch: an image past the deadline is FAILED, the others are not affected', async () => {
  const k = await t.newKey();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': k.key },
    payload: { image_urls: [images.url('/slow?ms=5000'), images.url('/status/404')] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const [slow, missing] = json<any>(res).results;
  assert.equal(slow.status, 'FAILED');
  assert.equal(slow.error, 'processing timed out');
  assert.equal(slow.response_code, 408);
  assert.match(slow.request_id, /^[0-9a-f-]{36}$/);
  assert.equal(missing.status, 'FAILED');
  assert.equal(missing.response_code, 404, 'its own failure, not the slow one');
  assert.equal((await t.db('requests').where({ key_id: k.id, status: 'ERROR' })).length, 2);
});
