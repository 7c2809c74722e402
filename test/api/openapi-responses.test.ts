/**
 * Real requests and real answers of every operation, success and error, validated against
 * /openapi.json as served: if the document and the behaviour drift apart, this fails.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;
let key: TestKey;
let other: TestKey;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
  other = await t.newKey();
  const doc = json<Record<string, unknown>>(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  ajv.addSchema({ ...doc, $id: 'openapi' });
});
after(async () => {
  await images?.close();
  await t?.close();
});

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function check(path: string, method: string, res: { statusCode: number; body: string }): Record<string, unknown> {
  const ref = `openapi#/${pointer('paths', path, method, 'responses', String(res.statusCode), 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  const body = json(res);
  assert.ok(validate(body), `${method.toUpperCase()} ${path} ${res.statusCode} ${res.body}\n${JSON.stringify(validate.errors, null, 1)}`);
  return body;
}

function requestValid(path: string, body: unknown): boolean {
  const ref = `openapi#/${pointer('paths', path, 'post', 'requestBody', 'content', 'application/json', 'schema')}`;
  return (ajv.getSchema(ref) ?? ajv.compile({ $ref: ref }))(body) === true;
}

const SYNC = '/v1/cv/requests/sync';
const camera = readFixture('camera.png').toString('base64');
const post = (url: string, payload: unknown, k: TestKey | null = key) =>
  t.app.inject({ method: 'POST', url, payload: payload as object, headers: k ? { 'x-api-key': k.key } : {} });

test('createSyncCvRequest: 200 (base64 and URL), 400, 401, 404-free, 409/422 answers match the document', async () => {
  const ok = check(SYNC, 'post', await post(SYNC, { external_id: 'oa-1', image_base64: camera }));
  assert.equal(ok.status, 'DONE');
  check(SYNC, 'post', await post(SYNC, { external_id: 'oa-2', image_url: images.url('/images/camera.png') }));
  // Echoes any string: an image that could not be fetched keeps its URL as sent.
  const failed = check(SYNC, 'post', await post(SYNC, { external_id: 'oa-3', image_url: images.url('/status/404') }));
  assert.equal(failed.status, 'ERROR');
  check(SYNC, 'post', await post(SYNC, { external_id: 'oa-4' }));
  check(SYNC, 'post', await post(SYNC, { external_id: 'oa-5', image_url: 'ftp://x' }));
  check(SYNC, 'post', await post(SYNC, { external_id: 'oa-6', image_base64: camera }, null));
  check(SYNC, 'post', await post(SYNC, { external_id: 'oa-1', image_base64: readFixture('basketball1.png').toString('base64') }));
});

test('the sync body is image_url XOR image_base64 in the document and in behaviour', async () => {
  const both = { external_id: 'x', image_url: 'http://a/b.jpg', image_base64: camera };
  const neither = { external_id: 'x' };
  assert.equal(requestValid(SYNC, both), false);
  assert.equal(requestValid(SYNC, neither), false);
  assert.equal(requestValid(SYNC, { external_id: 'x', image_url: 'not even a url' }), true, 'any string: the service decides');
  assert.equal((await post(SYNC, both)).statusCode, 400);
  assert.equal((await post(SYNC, neither)).statusCode, 400);
});

test('createBatchCvRequest, getRequest and submitFeedback: success and error answers match the document', async () => {
  const BATCH = '/v1/cv/requests/batch';
  const batch = check(BATCH, 'post', await post(BATCH, { image_urls: [images.url('/images/camera.png'), 'ftp://x'], external_id: 'b-1' }));
  // Without external_id: batch_id is still a string (assigned), and so is each image's external_id.
  const unnamed = check(BATCH, 'post', await post(BATCH, { image_urls: [images.url('/images/camera.png')] }));
  assert.equal(typeof unnamed.batch_id, 'string');
  check(BATCH, 'post', await post(BATCH, { image_urls: [] }));
  check(BATCH, 'post', await post(BATCH, { image_urls: Array(11).fill('http://a/b.jpg') }));

  const id = (batch.results as Array<{ request_id: string }>)[0].request_id;
  const LOOKUP = '/v1/cv/requests/{id}';
  const get = (rid: string, k: TestKey) => t.app.inject({ method: 'GET', url: `/v1/cv/requests/${rid}`, headers: { 'x-api-key': k.key } });
  check(LOOKUP, 'get', await get(id, key));
  const unnamedId = (unnamed.results as Array<{ request_id: string }>)[0].request_id;
  assert.equal(check(LOOKUP, 'get', await get(unnamedId, key)).external_id, unnamed.batch_id);
  check(LOOKUP, 'get', await get(id, other));
  check(LOOKUP, 'get', await get('not-a-uuid', key));
  check(LOOKUP, 'get', await get('0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11', key));

  const FEEDBACK = '/v1/cv/feedback';
  check(FEEDBACK, 'post', await post(FEEDBACK, { request_id: id, rating: 1 }));
  check(FEEDBACK, 'post', await post(FEEDBACK, { request_id: id, rating: 2 }));
  check(FEEDBACK, 'post', await post(FEEDBACK, { request_id: '0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11', rating: 0 }));
});
