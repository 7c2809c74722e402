/**
 * An address refused only after DNS resolution (no allow-list): sync answers 400
 * INVALID_IMAGE_URL with nothing kept or charged; a batch entry fails before processing
 * (request_id null) and its units are given back. No connection reaches the server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;

before(async () => {
  t = await buildTestApp({ IMAGE_FETCH_ALLOW_CIDRS: '' });
  images = await startImageServer();
});
after(async () => {
  await images?.close();
  await t?.close();
});

const viaName = () => `http://localhost:${images.port}/images/camera.png`;

test('sync: a host name resolving to loopback is 400 INVALID_IMAGE_URL; no request kept, nothing charged', async () => {
  const k = await t.newKey({ balance: 3 });
  images.reset();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key },
    payload: { external_id: 'ssrf', image_url: viaName() },
  });
  assert.equal(res.statusCode, 400, res.body);
  assert.deepEqual(json(res), { error: 'Bad Request', message: json(res).message, error_code: 'INVALID_IMAGE_URL' });
  assert.equal(images.connections, 0, 'no connection was made');
  assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
  assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 3);
  // the idempotency slot was not taken either
  const again = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key },
    payload: { external_id: 'ssrf', image_url: 'http://127.0.0.1:9/x.png' },
  });
  assert.equal(again.statusCode, 400);
  assert.equal(json(again).error_code, 'INVALID_IMAGE_URL');
});

test('batch: the refused image fails before processing and is given back', async () => {
  const k = await t.newKey({ balance: 2 });
  images.reset();
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/batch',
    headers: { 'x-api-key': k.key },
    payload: { image_urls: [viaName(), 'http://127.0.0.1:9/x.png'] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = json<any>(res);
  for (const entry of body.results) {
    assert.equal(entry.status, 'FAILED');
    assert.equal(entry.request_id, null);
    assert.equal(entry.response_code, null);
  }
  assert.equal(images.connections, 0);
  assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
  assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 2);
});

test('sync: a name that does not exist answers exactly like a name resolving to an internal address', async () => {
  // Different answers would let any key holder map internal DNS names through the API.
  const k = await t.newKey({ balance: 5 });
  const answer = async (host: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': k.key },
      payload: { external_id: `probe-${host}`, image_url: `http://${host}:${images.port}/images/camera.png` },
    });
    const body = json<{ error: string; message: string; error_code: string }>(res);
    return { status: res.statusCode, body: { ...body, message: body.message.replace(host, '<host>') } };
  };
  const internal = await answer('localhost');
  assert.equal(internal.status, 400);
  assert.equal(internal.body.error_code, 'INVALID_IMAGE_URL');
  assert.deepEqual(await answer('no-such-host.invalid'), internal);
  assert.equal(images.connections, 0);
  assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 5, 'neither is charged');
});
