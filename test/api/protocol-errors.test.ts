/**
 * Every answer carries the contract's error body, including what Fastify and node's HTTP
 * parser refuse before a route runs: undecodable paths, bad request lines, oversized
 * headers, slow clients, unknown routes and wrong methods. Over a real socket.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';

let t: TestApp;
let port: number;
let key: TestKey;

before(async () => {
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  key = await t.newKey();
});
after(async () => {
  await t?.close();
});

/** Writes raw bytes on a new connection and returns everything the server sends until it closes. */
function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {}); // the server closes after its answer; a reset then is fine
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status, headers: head, body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

function assertCatalogue(body: string, code: string): void {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  assert.equal(parsed.error_code, code, body);
  assert.equal(typeof parsed.error, 'string');
  assert.equal(typeof parsed.message, 'string');
}

test('an undecodable path is 400 MALFORMED_REQUEST with the contract body, not Fastify\'s FST_ERR_BAD_URL', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/v1/cv/requests/%E0%A4%A`, { headers: { 'x-api-key': key.key } });
  assert.equal(res.status, 400);
  assertCatalogue(await res.text(), 'MALFORMED_REQUEST');
});

test('a malformed request line is 400 MALFORMED_REQUEST written by the clientError handler', async () => {
  const res = await raw('THIS IS NOT HTTP\r\n\r\n');
  assert.equal(res.status, 400);
  assert.match(res.headers, /content-type: application\/json/i);
  assertCatalogue(res.body, 'MALFORMED_REQUEST');
});

test('headers over the limit are 431 HEADERS_TOO_LARGE', async () => {
  const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.equal(res.status, 431);
  assertCatalogue(res.body, 'HEADERS_TOO_LARGE');
});

test('a client timed out by the server gets 408 CLIENT_TIMEOUT with the contract body', async () => {
  // Node reports a request timeout as a clientError with ERR_HTTP_REQUEST_TIMEOUT (after
  // requestTimeout, checked every connectionsCheckingInterval): raise exactly that on a
  // real connection rather than wait for the server's clock.
  const accepted = new Promise<net.Socket>((resolve) => t.app.server.once('connection', resolve));
  const client = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  client.on('data', (c) => chunks.push(c));
  client.on('error', () => {});
  const closed = new Promise((r) => client.on('close', r));
  client.write('POST /v1/cv/requests/sync HTTP/1.1\r\nHost: x\r\n'); // headers never finished
  const serverSide = await accepted;
  t.app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSide);
  await closed;
  const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 408 /);
  assertCatalogue(body, 'CLIENT_TIMEOUT');
});

test('a wrong method on a known path is 405 with Allow; an unknown path is 404', async () => {
  const del = await t.app.inject({ method: 'DELETE', url: '/v1/cv/feedback' });
  assert.equal(del.statusCode, 405, del.body);
  assert.equal(del.headers.allow, 'POST');
  // A static path is its own route's alone: the lookup's GET /v1/cv/requests/:id is not allowed on it.
  const patch = await t.app.inject({ method: 'PATCH', url: '/v1/cv/requests/sync' });
  assert.equal(patch.headers.allow, 'POST');
  assertCatalogue(del.body, 'METHOD_NOT_ALLOWED');

  const put = await t.app.inject({ method: 'PUT', url: '/v1/cv/requests/0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11' });
  assert.equal(put.statusCode, 405);
  assert.equal(put.headers.allow, 'GET, HEAD');

  const miss = await t.app.inject({ method: 'GET', url: '/v1/cv/nothing-here' });
  assert.equal(miss.statusCode, 404);
  assert.equal(miss.headers.allow, undefined);
  assertCatalogue(miss.body, 'ROUTE_NOT_FOUND');
});

test('GET on the sync and batch paths is 405 with Allow: POST, not a lookup of the id "sync" (400)', async () => {
  for (const path of ['/v1/cv/requests/sync', '/v1/cv/requests/batch']) {
    for (const method of ['GET', 'HEAD'] as const) {
      // Refused before authentication, like any other wrong method: with a key, a wrong key or none.
      for (const headers of [{ 'x-api-key': key.key }, { 'x-api-key': 'cvk_not-a-key' }, {}]) {
        const res = await t.app.inject({ method, url: `${path}?x=1`, headers });
        assert.equal(res.statusCode, 405, `${method} ${path}: ${res.body}`);
        assert.equal(res.headers.allow, 'POST');
        if (method === 'GET') assertCatalogue(res.body, 'METHOD_NOT_ALLOWED');
      }
    }
  }
  // The lookup itself is unchanged.
  const lookup = (id: string) => t.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': key.key } });
  assertCatalogue((await lookup('not-a-uuid')).body, 'INVALID_REQUEST_ID');
  assertCatalogue((await lookup('syncs')).body, 'INVALID_REQUEST_ID');
  assertCatalogue((await lookup('0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11')).body, 'REQUEST_NOT_FOUND');
});

test('a JSON "__proto__" key is dropped, not answered "not valid JSON"', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/feedback',
    headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
    payload: '{"__proto__":{"polluted":true},"request_id":"0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11","rating":1}',
  });
  assert.equal(res.statusCode, 404, res.body);
  assertCatalogue(res.body, 'REQUEST_NOT_FOUND');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a JSON syntax error and a non-JSON content type are 400 INVALID_PARAMETERS', async () => {
  const bad = await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': key.key, 'content-type': 'application/json' }, payload: '{"rating":' });
  assert.equal(bad.statusCode, 400);
  assert.equal(json(bad).error_code, 'INVALID_PARAMETERS');
  assert.match(json(bad).message as string, /not valid JSON/);
  const form = await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': key.key, 'content-type': 'text/csv' }, payload: 'a,b' });
  assert.equal(form.statusCode, 400);
  assert.equal(json(form).error_code, 'INVALID_PARAMETERS');
});

test('lone UTF-16 surrogates: external_id and image_url are refused, never stored as U+FFFD', async () => {
  const k = await t.newKey();
  const post = (url: string, payload: string) =>
    t.app.inject({ method: 'POST', url, headers: { 'x-api-key': k.key, 'content-type': 'application/json' }, payload });
  for (const id of ['a\\ud800', 'a\\udc00b', '\\ud800\\ud800']) {
    const res = await post('/v1/cv/requests/sync', `{"external_id":"${id}","image_url":"http://127.0.0.1:9/x.jpg"}`);
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res).error_code, 'INVALID_EXTERNAL_ID');
  }
  // A well-formed pair (an emoji) is fine: it is one character, not a lone surrogate.
  const pair = await post('/v1/cv/requests/sync', '{"external_id":"ok-\\ud83d\\ude00","image_url":"ftp://example.com/x.jpg"}');
  assert.equal(json(pair).error_code, 'INVALID_IMAGE_URL', 'passed the external_id check');

  const url = await post('/v1/cv/requests/sync', '{"external_id":"u1","image_url":"http://127.0.0.1:9/\\ud800.jpg"}');
  assert.equal(url.statusCode, 400);
  assert.equal(json(url).error_code, 'INVALID_IMAGE_URL');

  const batchId = await post('/v1/cv/requests/batch', '{"external_id":"b\\udfff","image_urls":["http://127.0.0.1:9/x.jpg"]}');
  assert.equal(json(batchId).error_code, 'INVALID_EXTERNAL_ID');
  const batchUrl = await post('/v1/cv/requests/batch', '{"image_urls":["http://127.0.0.1:9/\\ud800.jpg"]}');
  assert.equal(batchUrl.statusCode, 200, batchUrl.body);
  const [entry] = json<{ results: Array<{ status: string; request_id: string | null; error: string }> }>(batchUrl).results;
  assert.deepEqual([entry.status, entry.request_id], ['FAILED', null]);
  assert.match(entry.error, /surrogate/);

  assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0, 'nothing stored');
});
