/** POST /v1/cv/requests/sync: every row of the spec and the contract, on the real model. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { buildApp } from '../../src/app.js';
import { readMonthlyUsage } from '../../src/store/key-usage.js';
import { readFixture } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;
let key: TestKey;
const basketball = readFixture('basketball1.png');
const camera = readFixture('camera.png');
let n = 0;
const eid = (p = 'sync') => `${p}-${++n}`;

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
});
after(async () => {
  await images?.close();
  await t?.close();
});

function sync(body: unknown, k: TestKey = key, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key, ...headers },
    ...(typeof body === 'string' ? { payload: body } : { payload: body as object }),
  });
}

function assertError(res: { statusCode: number; body: string }, status: number, error: string, code: string) {
  assert.equal(res.statusCode, status, res.body);
  const body = json(res);
  assert.deepEqual(Object.keys(body).sort().filter((k) => k !== 'external_id'), ['error', 'error_code', 'message']);
  assert.equal(body.error, error);
  assert.equal(body.error_code, code);
  assert.ok(typeof body.message === 'string' && body.message.length > 0);
  return body;
}

describe('200', () => {
  test('base64 image: DONE with detections, persisted with lifecycle fields', async () => {
    const external = eid();
    const res = await sync({ external_id: external, image_base64: basketball.toString('base64') });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<any>(res);
    assert.equal(body.success, true);
    assert.equal(body.status, 'DONE');
    assert.equal(body.external_id, external);
    assert.match(body.request_id, /^[0-9a-f-]{36}$/);
    assert.equal(body.response_code, 200);
    assert.ok(body.results.length > 0, 'the basketball image has detections');
    for (const d of body.results) {
      assert.equal(typeof d.label, 'string');
      assert.equal(typeof d.external_id, 'string');
      for (const f of ['x', 'y', 'width', 'height']) assert.ok(Number.isInteger(d.bounding_box[f]), `${f} is an integer`);
      assert.ok(d.confidence > 0 && d.confidence <= 1);
    }
    assert.ok(body.error === undefined);
    assert.ok(Number.isInteger(body.processing_time_ms));
    assert.equal(typeof body.model.name, 'string');
    assert.match(body.image_url, new RegExp(`^http://cv\\.test/v1/cv/images/${body.request_id}\\?expires=\\d+&signature=`));
    assert.equal(res.headers['idempotent-replayed'], undefined);

    const row = await t.db('requests').where({ id: body.request_id }).first();
    assert.equal(row.status, 'DONE');
    assert.equal(row.kind, 'sync');
    assert.ok(row.created_at <= row.started_at && row.started_at <= row.finished_at);
    assert.equal(row.model_name, body.model.name);
    assert.ok(row.processing_time_ms >= 0);
    assert.equal(row.results.length, body.results.length);

    // the stored image is served at its signed URL
    const u = new URL(body.image_url);
    const img = await t.app.inject({ method: 'GET', url: u.pathname + u.search });
    assert.equal(img.statusCode, 200);
    assert.equal(img.headers['content-type'], 'image/png');
    assert.ok(img.rawPayload.equals(basketball));
    const forged = await t.app.inject({ method: 'GET', url: `${u.pathname}?expires=${u.searchParams.get('expires')}&signature=AAAA` });
    assertError(forged, 403, 'forbidden', 'INVALID_IMAGE_SIGNATURE');
  });

  test('data-URI prefix is accepted; the format comes from the bytes, not the prefix', async () => {
    const res = await sync({ external_id: eid(), image_base64: `data:image/jpeg;base64,${camera.toString('base64')}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).status, 'DONE');
  });

  test('image_url fetched from a server through the allow-list', async () => {
    const res = await sync({ external_id: eid(), image_url: images.url('/images/basketball1.png') });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<any>(res);
    assert.equal(body.status, 'DONE');
    assert.ok(body.results.length > 0);
  });

  test('classes: detections not mapped to the key are removed', async () => {
    const all = json<any>(await sync({ external_id: eid(), image_base64: basketball.toString('base64') }));
    const labels = [...new Set(all.results.map((d: { label: string }) => d.label))] as string[];
    assert.ok(labels.length > 0);
    const keep = labels[0];
    const narrow = await t.newKey({ classes: [keep] });
    const res = json<any>(await sync({ external_id: eid(), image_base64: basketball.toString('base64') }, narrow));
    assert.ok(res.results.length > 0);
    assert.ok(res.results.every((d: { label: string }) => d.label === keep));
    const other = await t.newKey({ classes: ['toaster'] });
    const none = json<any>(await sync({ external_id: eid(), image_base64: basketball.toString('base64') }, other));
    assert.equal(none.status, 'DONE');
    assert.deepEqual(none.results.filter((d: { label: string }) => d.label !== 'toaster'), []);
  });

  test('a download that fails ends ERROR with the upstream status in response_code', async () => {
    const res = await sync({ external_id: eid(), image_url: images.url('/status/404') });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<any>(res);
    assert.equal(body.success, false);
    assert.equal(body.status, 'ERROR');
    assert.equal(body.response_code, 404);
    assert.ok(body.error.length > 0);
    assert.deepEqual(body.results, []);
    assert.equal(body.image_url, images.url('/status/404'));
    const notImage = json<any>(await sync({ external_id: eid(), image_url: images.url('/text') }));
    assert.equal(notImage.status, 'ERROR');
  });

  test('bytes that pass the sniff but do not decode: 200, ERROR', async () => {
    const broken = Buffer.concat([basketball.subarray(0, 64), Buffer.alloc(200, 7)]);
    const res = await sync({ external_id: eid(), image_base64: broken.toString('base64') });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<any>(res);
    assert.equal(body.status, 'ERROR');
    assert.equal(body.success, false);
    assert.ok(body.error.length > 0);
  });
});

describe('400 Bad Request', () => {
  const cases: Array<[string, unknown, string]> = [
    ['missing external_id', { image_base64: 'aGVsbG8=' }, 'INVALID_PARAMETERS'],
    ['external_id empty', { external_id: '', image_url: 'https://example.com/a.png' }, 'INVALID_EXTERNAL_ID'],
    ['external_id too long', { external_id: 'x'.repeat(256), image_url: 'https://example.com/a.png' }, 'INVALID_EXTERNAL_ID'],
    ['external_id with a control character', { external_id: 'a\nb', image_url: 'https://example.com/a.png' }, 'INVALID_EXTERNAL_ID'],
    ['external_id not a string', { external_id: 12, image_url: 'https://example.com/a.png' }, 'INVALID_EXTERNAL_ID'],
    ['neither image', { external_id: 'x' }, 'INVALID_PARAMETERS'],
    ['both images', { external_id: 'x', image_url: 'https://example.com/a.png', image_base64: 'aGVsbG8=' }, 'INVALID_PARAMETERS'],
    ['image_url not a string', { external_id: 'x', image_url: 5 }, 'INVALID_PARAMETERS'],
    ['image_url not a URL', { external_id: 'x', image_url: 'not a url' }, 'INVALID_IMAGE_URL'],
    ['image_url with another scheme', { external_id: 'x', image_url: 'ftp://example.com/a.png' }, 'INVALID_IMAGE_URL'],
    ['image_url over 2048 characters', { external_id: 'x', image_url: `https://example.com/${'a'.repeat(2050)}` }, 'INVALID_IMAGE_URL'],
    ['image_url at a private address', { external_id: 'x', image_url: 'http://10.1.2.3/a.png' }, 'INVALID_IMAGE_URL'],
    ['image_url at the metadata address', { external_id: 'x', image_url: 'http://169.254.169.254/latest/meta-data' }, 'INVALID_IMAGE_URL'],
    ['image_base64 not base64', { external_id: 'x', image_base64: '!!!not base64!!!' }, 'INVALID_IMAGE_BASE64'],
    ['image_base64 not an image', { external_id: 'x', image_base64: Buffer.from('just some text, not an image').toString('base64') }, 'UNSUPPORTED_IMAGE_FORMAT'],
    ['image_base64 not a string', { external_id: 'x', image_base64: ['a'] }, 'INVALID_PARAMETERS'],
    ['body an array', [1, 2], 'INVALID_PARAMETERS'],
  ];
  for (const [name, body, code] of cases) {
    test(`${name} → ${code}`, async () => {
      assertError(await sync(body), 400, 'Bad Request', code);
    });
  }

  test('base64 over 10 MB → IMAGE_TOO_LARGE', async () => {
    const big = 'A'.repeat(10 * 1024 * 1024 + 4);
    assertError(await sync({ external_id: eid(), image_base64: big }), 400, 'Bad Request', 'IMAGE_TOO_LARGE');
  });

  test('over 40 megapixels → IMAGE_TOO_LARGE before any full decode; no request kept, nothing charged', async () => {
    const k = await t.newKey({ balance: 2 });
    const huge = await sharp({ create: { width: 8000, height: 5001, channels: 3, background: '#888' } }).png().toBuffer();
    const res = await sync({ external_id: eid('huge'), image_base64: huge.toString('base64') }, k);
    const body = assertError(res, 400, 'Bad Request', 'IMAGE_TOO_LARGE');
    assert.match(body.message as string, /MP|pixel/i);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 2);
  });

  test('malformed JSON, empty body and an unknown content type → INVALID_PARAMETERS', async () => {
    assertError(await sync('{"external_id": "x", ', key, { 'content-type': 'application/json' }), 400, 'Bad Request', 'INVALID_PARAMETERS');
    assertError(await sync('', key, { 'content-type': 'application/json' }), 400, 'Bad Request', 'INVALID_PARAMETERS');
    assertError(await sync('external_id=x', key, { 'content-type': 'application/x-www-form-urlencoded' }), 400, 'Bad Request', 'INVALID_PARAMETERS');
  });

  test('nothing is recorded or charged for a refused body', async () => {
    const k = await t.newKey({ balance: 5 });
    assertError(await sync({ external_id: 'x', image_base64: '!!!' }, k), 400, 'Bad Request', 'INVALID_IMAGE_BASE64');
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 5);
  });
});

test('413 for a body over the limit', async () => {
  const res = await sync({ external_id: eid(), image_base64: 'A'.repeat(16 * 1024 * 1024) });
  assertError(res, 413, 'Payload Too Large', 'PAYLOAD_TOO_LARGE');
});

describe('idempotency on (key, external_id)', () => {
  test('same image: the stored result, Idempotent-Replayed, no new request, no quota', async () => {
    const k = await t.newKey({ quota: 1, balance: 1 });
    const body = { external_id: 'same', image_base64: camera.toString('base64') };
    const first = await sync(body, k);
    assert.equal(first.statusCode, 200);
    const again = await sync({ external_id: 'same', image_base64: `data:image/png;base64,${camera.toString('base64')}` }, k);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(json(again).request_id, json(first).request_id);
    assert.deepEqual(json(again).results, json(first).results);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 1);
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 0);
  });

  test('different image: 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const external = eid('reuse');
    assert.equal((await sync({ external_id: external, image_base64: camera.toString('base64') })).statusCode, 200);
    assertError(await sync({ external_id: external, image_base64: basketball.toString('base64') }), 422, 'idempotency_key_reused', 'IDEMPOTENCY_KEY_REUSED');
    assertError(await sync({ external_id: external, image_url: images.url('/images/camera.png') }), 422, 'idempotency_key_reused', 'IDEMPOTENCY_KEY_REUSED');
  });

  test('another key may use the same external_id', async () => {
    const external = eid('shared');
    const other = await t.newKey();
    const a = json(await sync({ external_id: external, image_base64: camera.toString('base64') }));
    const b = json(await sync({ external_id: external, image_base64: camera.toString('base64') }, other));
    assert.notEqual(a.request_id, b.request_id);
  });

  test('while the first is processing: 409 REQUEST_IN_PROGRESS', async () => {
    const external = eid('slow');
    const url = images.url('/slow?ms=1500');
    const first = sync({ external_id: external, image_url: url });
    await eventually(() => t.db('requests').where({ key_id: key.id, external_id: external }).first(), { what: 'the first call creating its request', intervalMs: 20 });
    assertError(await sync({ external_id: external, image_url: url }), 409, 'request_in_progress', 'REQUEST_IN_PROGRESS');
    assert.equal((await first).statusCode, 200);
  });

  test('after an ERROR the same call is processed again as a new request', async () => {
    const external = eid('retry');
    const failed = json(await sync({ external_id: external, image_url: images.url('/status/503') }));
    assert.equal(failed.status, 'ERROR');
    const retried = await sync({ external_id: external, image_url: images.url('/status/503') });
    assert.equal(retried.statusCode, 200);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    assert.notEqual(json(retried).request_id, failed.request_id);
  });

  test('two replicas on one database: parallel identical calls still process once', async () => {
    const k = await t.newKey();
    const replica = await buildApp({ ...t.services, instanceId: 'replica-b' }, { logger: false, sweepAbandoned: false });
    try {
      const body = { external_id: 'two-replicas', image_base64: camera.toString('base64') };
      const calls = Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? t.app : replica).inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': k.key }, payload: body }),
      );
      const all = await Promise.all(calls);
      assert.ok(all.every((r) => r.statusCode === 200 || r.statusCode === 409), all.map((r) => r.statusCode).join(','));
      assert.equal(all.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined).length, 1);
      assert.equal((await t.db('requests').where({ key_id: k.id })).length, 1);
    } finally {
      await replica.close();
    }
  });

  test('20 parallel identical calls: one processing, the others replay or 409', async () => {
    const k = await t.newKey();
    const body = { external_id: 'race', image_base64: camera.toString('base64') };
    const all = await Promise.all(Array.from({ length: 20 }, () => sync(body, k)));
    const statuses = all.map((r) => r.statusCode);
    assert.ok(statuses.every((s) => s === 200 || s === 409), statuses.join(','));
    const fresh = all.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
    assert.equal(fresh.length, 1, 'exactly one call processed the image');
    const ids = new Set(all.filter((r) => r.statusCode === 200).map((r) => json(r).request_id));
    assert.equal(ids.size, 1);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 1);
    for (const r of all.filter((x) => x.statusCode === 409)) assert.equal(json(r).error_code, 'REQUEST_IN_PROGRESS');
  });
});

test('500: an internal failure after the charge gives the generic body, ends the request ERROR and refunds it', async () => {
  const k = await t.newKey({ balance: 5 });
  // The admission (claim and charge) succeeds; the pipeline's ending write fails (an unknown column).
  await t.db.raw('alter table requests rename column model_version to model_version_moved');
  let res;
  try {
    res = await sync({ external_id: eid('internal'), image_base64: camera.toString('base64') }, k);
  } finally {
    await t.db.raw('alter table requests rename column model_version_moved to model_version');
  }
  const body = assertError(res, 500, 'Internal Server Error', 'INTERNAL_ERROR');
  assert.equal(body.message, 'Internal error');
  assert.ok(!/requests|relation|column|select|insert|stack|at /i.test(res.body), res.body);
  // Nothing left unfinished, nothing left DONE behind the 500, nothing charged for it.
  const rows = await t.db('requests').where({ key_id: k.id });
  assert.equal(rows.length, 1);
  assert.equal(rows[0].status, 'ERROR');
  assert.ok(rows[0].refunded_at instanceof Date, 'refunded on the row');
  assert.equal(await readMonthlyUsage(t.db, k.id), 0);
  assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 5);
});
