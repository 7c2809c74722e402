/**
 * Backpressure with real large images: 36-megapixel PNGs decoded for real, through the API.
 * When every decode/inference slot is busy and the queue is full, a sync request is 503
 * SERVICE_OVERLOADED with Retry-After, is not charged and leaves no record; a batch image
 * is a FAILED entry with response_code 503, not charged. The gate never lets more than
 * DETECT_CONCURRENCY images decode at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { readMonthlyUsage } from '../../src/store/key-usage.js';
import { fixturePath } from '../helpers/fixtures.js';
import { startImageServer } from '../helpers/image-server.js';

let t: TestApp;
let bigPng: Buffer;

before(async () => {
  t = await buildTestApp({ DETECT_CONCURRENCY: '1', DETECT_QUEUE_LENGTH: '1' });
  // A real photo, blown up to 6000×6000 (36 MP, under the 40 MP limit): about 1 MB of PNG, 108 MB decoded.
  bigPng = await sharp(fixturePath('camera.png')).resize(6000, 6000, { kernel: 'nearest' }).png().toBuffer();
});
after(async () => {
  await t?.close();
});

function syncBody(externalId: string): string {
  return JSON.stringify({ external_id: externalId, image_base64: bigPng.toString('base64') });
}

test('gate full: a sync request is 503 SERVICE_OVERLOADED with Retry-After, not charged, no record', async () => {
  const k = await t.newKey();
  // Occupy the one slot and the one queue place, as two long decodes would.
  const running = await t.app.detectGate.acquire();
  const queued = t.app.detectGate.acquire();
  try {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': k.key, 'content-type': 'application/json' },
      payload: syncBody('overloaded-1'),
    });
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['retry-after'], '1');
    const body = json<{ error_code: string; error: string; message: string }>(res);
    assert.equal(body.error_code, 'SERVICE_OVERLOADED');
    assert.equal(body.error, 'Service Unavailable');
    assert.equal(await readMonthlyUsage(t.db, k.id), 0);
    const rows = await t.db('requests').where({ key_id: k.id });
    assert.equal(rows.length, 0);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^rejections_total\{reason="overload"\} 1$/m);
  } finally {
    running();
    (await queued)();
  }
  // Capacity back: the same external_id is processed (the refusal did not hold it).
  const ok = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key, 'content-type': 'application/json' },
    payload: syncBody('overloaded-1'),
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(json<{ status: string }>(ok).status, 'DONE');
  assert.equal(await readMonthlyUsage(t.db, k.id), 1);
});

test('gate full: a batch image is a FAILED entry with response_code 503, not charged, no record', async () => {
  const images = await startImageServer();
  const k = await t.newKey({ balance: 10 });
  const running = await t.app.detectGate.acquire();
  const queued = t.app.detectGate.acquire();
  try {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/batch',
      headers: { 'x-api-key': k.key },
      payload: { external_id: 'overloaded-batch', image_urls: [images.url('/images/camera.png')] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const [entry] = json<{ results: Array<{ status: string; response_code: number; request_id: string | null }> }>(res).results;
    assert.deepEqual([entry.status, entry.response_code, entry.request_id], ['FAILED', 503, null]);
    assert.equal(await readMonthlyUsage(t.db, k.id), 0);
    const org = await t.db('organizations').where({ id: k.orgId }).first<{ balance: number }>('balance');
    assert.equal(org.balance, 10);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
  } finally {
    running();
    (await queued)();
    await images.close();
  }
});

test('many large images at once: one queues behind the busy slot, the rest are refused 503, never two decodes at once, quota = served', async () => {
  const k = await t.newKey({ balance: 100 });
  const n = 6;
  const refusedBefore = t.app.detectGate.stats().refused;
  // The one slot is held, as a long decode would hold it, so the burst finds the gate busy
  // whatever the timing: the first image to reach it takes the queue place, the others are refused.
  const running = await t.app.detectGate.acquire();
  let settled = 0;
  const pending = Array.from({ length: n }, (_, i) =>
    t.app
      .inject({
        method: 'POST',
        url: '/v1/cv/requests/sync',
        headers: { 'x-api-key': k.key, 'content-type': 'application/json' },
        payload: syncBody(`burst-${i}`),
      })
      .finally(() => settled++),
  );
  try {
    await eventually(() => settled === n - 1 && t.app.detectGate.stats().queued === 1, { what: `${n - 1} refused and one queued`, timeoutMs: 60_000 });
  } finally {
    running();
  }
  const answers = await Promise.all(pending);
  const served = answers.filter((a) => a.statusCode === 200);
  const refused = answers.filter((a) => a.statusCode === 503);
  assert.equal(served.length, 1, answers.map((a) => `${a.statusCode} ${a.body.slice(0, 200)}`).join('\n'));
  assert.equal(refused.length, n - 1);
  for (const a of refused) {
    assert.equal(json<{ error_code: string }>(a).error_code, 'SERVICE_OVERLOADED');
    assert.equal(a.headers['retry-after'], '1');
  }
  assert.equal(json<{ status: string }>(served[0]).status, 'DONE');
  assert.equal(t.app.detectGate.stats().refused - refusedBefore, n - 1);
  assert.equal(t.app.detectGate.stats().peakActive, 1, 'never two decodes at once');
  assert.equal(t.app.detectGate.stats().active, 0);
  assert.equal(await readMonthlyUsage(t.db, k.id), 1);
  const org = await t.db('organizations').where({ id: k.orgId }).first<{ balance: number }>('balance');
  assert.equal(org.balance, 100 - 1);
  const rows = await t.db('requests').where({ key_id: k.id });
  assert.equal(rows.length, 1);
  assert.equal(rows[0].status, 'DONE');
});
