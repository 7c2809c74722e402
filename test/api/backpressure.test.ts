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
import { readMonthlyUsage } from '../../src/store/key-usage.js';
import { fixturePath } from '../helpers/fixtures.js';

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

test('many large images at once: each is served or refused 503, never more decodes than the concurrency, quota = served', async () => {
  const k = await t.newKey({ balance: 100 });
  const n = 6;
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/cv/requests/sync',
        headers: { 'x-api-key': k.key, 'content-type': 'application/json' },
        payload: syncBody(`burst-${i}`),
      }),
    ),
  );
  const served = answers.filter((a) => a.statusCode === 200).length;
  for (const a of answers) {
    assert.ok(a.statusCode === 200 || a.statusCode === 503, `${a.statusCode} ${a.body}`);
    if (a.statusCode === 503) assert.equal(json<{ error_code: string }>(a).error_code, 'SERVICE_OVERLOADED');
  }
  assert.ok(served >= 1);
  assert.equal(t.app.detectGate.stats().peakActive, 1, 'never two decodes at once');
  assert.equal(t.app.detectGate.stats().active, 0);
  assert.equal(await readMonthlyUsage(t.db, k.id), served);
  const org = await t.db('organizations').where({ id: k.orgId }).first<{ balance: number }>('balance');
  assert.equal(org.balance, 100 - served);
  const rows = await t.db('requests').where({ key_id: k.id });
  assert.equal(rows.length, served);
  assert.ok(rows.every((r: { status: string }) => r.status === 'DONE'));
});
