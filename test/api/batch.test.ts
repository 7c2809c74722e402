/** POST /v1/cv/requests/batch: mixed good and bad URLs, each its own request, the 400 rows. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readMonthlyUsage } from '../../src/store/key-usage.js';
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

const batch = (payload: unknown, k: TestKey = key) =>
  t.app.inject({ method: 'POST', url: '/v1/cv/requests/batch', headers: { 'x-api-key': k.key }, payload: payload as object });

function assertError(res: { statusCode: number; body: string }, status: number, error: string, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.deepEqual(json(res), { error, message: json(res).message, error_code: code });
  return json(res);
}

test('mixed good and bad URLs: 200, one entry per URL in order, failures isolated', async () => {
  const k = await t.newKey({ balance: 10 });
  const urls = [
    images.url('/images/basketball1.png'),
    images.url('/status/404'),
    'ftp://example.com/a.png',
    'http://10.0.0.1/a.png',
    images.url('/images/camera.png'),
    images.url('/text'),
  ];
  const res = await batch({ image_urls: urls, external_id: 'batch-1' }, k);
  assert.equal(res.statusCode, 200, res.body);
  const body = json<any>(res);
  assert.equal(body.success, true);
  assert.equal(body.batch_id, 'batch-1');
  assert.equal(body.total_images, urls.length);
  assert.deepEqual(body.results.map((r: { image_url: string }) => r.image_url), urls);

  const [good, missing, badScheme, privateAddr, good2, notImage] = body.results;
  for (const ok of [good, good2]) {
    assert.equal(ok.status, 'DONE');
    assert.equal(ok.success, true);
    assert.equal(ok.error, null);
    assert.equal(ok.response_code, 200);
    assert.match(ok.request_id, /^[0-9a-f-]{36}$/);
  }
  assert.ok(good.results.length > 0);
  assert.equal(missing.status, 'FAILED');
  assert.equal(missing.success, false);
  assert.equal(missing.response_code, 404);
  assert.match(missing.request_id, /^[0-9a-f-]{36}$/, 'a failed download was processed: it has a request');
  assert.deepEqual(missing.results, []);
  for (const early of [badScheme, privateAddr]) {
    assert.equal(early.status, 'FAILED');
    assert.equal(early.request_id, null, 'failed before processing');
    assert.ok(early.error.length > 0);
    assert.deepEqual(early.results, []);
    assert.equal(early.response_code, null);
  }
  assert.equal(notImage.status, 'FAILED');

  // each processed image is its own request record, carrying the batch's external_id
  const rows = await t.db('requests').where({ key_id: k.id }).orderBy('created_at');
  assert.equal(rows.length, 4);
  assert.ok(rows.every((r) => r.kind === 'batch' && r.external_id === 'batch-1'));
  const lookup = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${good.request_id}`, headers: { 'x-api-key': k.key } });
  assert.equal(json(lookup).status, 'DONE');
  assert.equal(json(lookup).external_id, 'batch-1');

  // images that failed before processing are given back: 6 charged, 2 returned
  assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 6);
  assert.equal(await readMonthlyUsage(t.db, k.id), 4);
});

test('without external_id: batch_id is an id the service assigns, carried as external_id by each image\'s request', async () => {
  const k = await t.newKey();
  const urls = [images.url('/images/camera.png'), images.url('/status/500'), 'ftp://example.com/a.png'];
  const res = await batch({ image_urls: urls }, k);
  assert.equal(res.statusCode, 200, res.body);
  const a = json<any>(res);
  assert.equal(typeof a.batch_id, 'string', 'batch_id is a string in the contract, never null');
  assert.match(a.batch_id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(a.total_images, 3);
  assert.equal(a.results[1].response_code, 500);
  const rows = await t.db('requests').where({ key_id: k.id });
  assert.equal(rows.length, 2);
  assert.ok(rows.every((r) => r.external_id === a.batch_id));
  // A lookup of each processed image (DONE and ERROR alike) answers that id as its external_id.
  for (const entry of a.results.slice(0, 2)) {
    const lookup = json<any>(await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${entry.request_id}`, headers: { 'x-api-key': k.key } }));
    assert.equal(lookup.external_id, a.batch_id);
  }
  // Every batch gets its own.
  const again = json<any>(await batch({ image_urls: [images.url('/status/500')] }, k));
  assert.notEqual(again.batch_id, a.batch_id);
});

test('a batch image stored without an external_id (before batches got an id) answers an empty string, not null', async () => {
  const [row] = await t.db('requests')
    .insert({ key_id: key.id, org_id: key.orgId, kind: 'batch', external_id: null, source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:x', status: 'ERROR', error: 'x' })
    .returning('id');
  const res = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${row.id}`, headers: { 'x-api-key': key.key } });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(json(res).external_id, '');
});

test('the batch external_id is not idempotent', async () => {
  const b1 = json<any>(await batch({ image_urls: [images.url('/status/500')], external_id: 'again' }));
  const b2 = json<any>(await batch({ image_urls: [images.url('/status/500')], external_id: 'again' }));
  assert.notEqual(b1.results[0].request_id, b2.results[0].request_id);
});

describe('400', () => {
  test('missing or empty image_urls: invalid_request MISSING_IMAGE_URLS', async () => {
    assertError(await batch({}), 400, 'invalid_request', 'MISSING_IMAGE_URLS');
    assertError(await batch({ image_urls: [] }), 400, 'invalid_request', 'MISSING_IMAGE_URLS');
    assertError(await batch({ image_urls: null }), 400, 'invalid_request', 'MISSING_IMAGE_URLS');
    const empty = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/batch', headers: { 'x-api-key': key.key } });
    assertError(empty, 400, 'invalid_request', 'MISSING_IMAGE_URLS');
  });

  test('more than 10: invalid_request TOO_MANY_IMAGES, message states the maximum and the count', async () => {
    const urls = Array.from({ length: 11 }, (_, i) => `https://example.com/${i}.png`);
    const body = assertError(await batch({ image_urls: urls }), 400, 'invalid_request', 'TOO_MANY_IMAGES');
    assert.match(body.message as string, /10/);
    assert.match(body.message as string, /11/);
  });

  test('wrong types: Bad Request INVALID_PARAMETERS / INVALID_EXTERNAL_ID', async () => {
    assertError(await batch({ image_urls: 'https://example.com/a.png' }), 400, 'Bad Request', 'INVALID_PARAMETERS');
    assertError(await batch({ image_urls: [1, 2] }), 400, 'Bad Request', 'INVALID_PARAMETERS');
    assertError(await batch({ image_urls: ['https://example.com/a.png'], external_id: '' }), 400, 'Bad Request', 'INVALID_EXTERNAL_ID');
  });
  test('nothing recorded or charged for a refused batch', async () => {
    const k = await t.newKey({ balance: 3 });
    await batch({ image_urls: [] }, k);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 3);
  });
});

test('ten failing images: every image still gets its own FAILED entry', async () => {
  const urls = Array.from({ length: 10 }, () => images.url('/status/502'));
  const body = json<any>(await batch({ image_urls: urls }));
  assert.equal(body.results.length, 10);
  assert.ok(body.results.every((r: { status: string; response_code: number }) => r.status === 'FAILED' && r.response_code === 502));
});
