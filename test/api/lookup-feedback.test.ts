/** GET /v1/cv/requests/{id} and POST /v1/cv/feedback: ownership per key, rating rules, history. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFeedback } from '../../src/store/feedback.js';
import { readFixture } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';

let t: TestApp;
let owner: TestKey;
let stranger: TestKey;
let requestId: string;
const UNKNOWN = '3f1c2a4e-9b7d-4c1e-8f00-000000000000';

before(async () => {
  t = await buildTestApp();
  owner = await t.newKey();
  // Same organisation, another key: ownership is per key.
  stranger = await t.newKey({ orgId: owner.orgId });
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': owner.key },
    payload: { external_id: 'to-rate', image_base64: readFixture('camera.png').toString('base64') },
  });
  assert.equal(res.statusCode, 200, res.body);
  requestId = json<{ request_id: string }>(res).request_id;
});
after(async () => {
  await t?.close();
});

const lookup = (id: string, k: TestKey = owner) => t.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': k.key } });
const feedback = (payload: unknown, k: TestKey = owner) =>
  t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': k.key }, payload: payload as object });

function assertError(res: { statusCode: number; body: string }, status: number, error: string, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.deepEqual(json(res), { error, message: json(res).message, error_code: code });
  assert.ok((json(res).message as string).length > 0);
}

describe('lookup', () => {
  test('200: the CVResult of the caller\'s request, with lookup rate-limit headers', async () => {
    const res = await lookup(requestId);
    assert.equal(res.statusCode, 200);
    const body = json<any>(res);
    assert.equal(body.request_id, requestId);
    assert.equal(body.external_id, 'to-rate');
    assert.equal(body.status, 'DONE');
    assert.equal(body.success, true);
    assert.ok(Array.isArray(body.results));
    assert.equal(res.headers['ratelimit-limit'], '600');
  });

  test('200 for a request still processing: success false, empty results, no error', async () => {
    const [row] = await t.db('requests')
      .insert({ key_id: owner.id, org_id: owner.orgId, kind: 'sync', external_id: 'p', source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:x', status: 'PROCESSING' })
      .returning('id');
    const body = json<any>(await lookup(row.id));
    assert.equal(body.status, 'PROCESSING');
    assert.equal(body.success, false);
    assert.deepEqual(body.results, []);
    assert.equal(body.error, undefined);
    await t.db('requests').where({ id: row.id }).update({ status: 'ERROR', error: 'x' });
  });

  test('403 unauthorized REQUEST_FORBIDDEN for another key\'s request', async () => {
    assertError(await lookup(requestId, stranger), 403, 'unauthorized', 'REQUEST_FORBIDDEN');
  });

  test('404 request_not_found REQUEST_NOT_FOUND', async () => {
    assertError(await lookup(UNKNOWN), 404, 'request_not_found', 'REQUEST_NOT_FOUND');
  });

  test('400 missing_request_id INVALID_REQUEST_ID for a bad or missing id', async () => {
    assertError(await lookup('not-a-uuid'), 400, 'missing_request_id', 'INVALID_REQUEST_ID');
    assertError(await lookup(''), 400, 'missing_request_id', 'INVALID_REQUEST_ID');
    // Longer than Fastify's default parameter limit (100): still the route's own answer.
    assertError(await lookup('a'.repeat(5000)), 400, 'missing_request_id', 'INVALID_REQUEST_ID');
    const bare = await t.app.inject({ method: 'GET', url: '/v1/cv/requests', headers: { 'x-api-key': owner.key } });
    assertError(bare, 400, 'missing_request_id', 'INVALID_REQUEST_ID');
  });
});

describe('feedback', () => {
  test('200, then a new rating replaces the old one and the history keeps both', async () => {
    const a = await feedback({ request_id: requestId, rating: 1 });
    assert.equal(a.statusCode, 200, a.body);
    assert.deepEqual(json(a), { status: 'success', message: json(a).message, request_id: requestId, rating: 1 });
    const b = await feedback({ request_id: requestId, rating: -1 });
    assert.equal(json(b).rating, -1);
    const c = await feedback({ request_id: requestId, rating: 0 });
    assert.equal(json(c).rating, 0);
    const stored = await readFeedback(t.db, requestId);
    assert.equal(stored?.rating, 0);
    assert.deepEqual(stored?.history.map((h) => h.rating), [1, -1, 0]);
    assert.equal((await t.db('feedback').where({ request_id: requestId })).length, 1);
  });

  test('404 REQUEST_NOT_FOUND for an unknown request and for another key\'s request', async () => {
    assertError(await feedback({ request_id: UNKNOWN, rating: 1 }), 404, 'request_not_found', 'REQUEST_NOT_FOUND');
    assertError(await feedback({ request_id: requestId, rating: 1 }, stranger), 404, 'request_not_found', 'REQUEST_NOT_FOUND');
    assert.equal((await readFeedback(t.db, requestId))?.history.length, 3, 'nothing was added');
  });

  for (const rating of [2, -2, '1', true, 0.5, null, 'good']) {
    test(`400 invalid_rating INVALID_RATING for ${JSON.stringify(rating)}`, async () => {
      const res = await feedback({ request_id: requestId, rating });
      assertError(res, 400, 'invalid_rating', 'INVALID_RATING');
      assert.match(json(res).message as string, /-1 \(bad\), 0 \(neutral\) or 1 \(good\)/);
    });
  }

  test('400 for a missing rating, a bad request_id, a non-object body', async () => {
    assertError(await feedback({ request_id: requestId }), 400, 'invalid_rating', 'INVALID_RATING');
    assertError(await feedback({ request_id: 'abc', rating: 1 }), 400, 'missing_request_id', 'INVALID_REQUEST_ID');
    assertError(await feedback({ rating: 1 }), 400, 'missing_request_id', 'INVALID_REQUEST_ID');
    assertError(await feedback([1]), 400, 'Bad Request', 'INVALID_PARAMETERS');
  });
});
