/**
 * The request lifecycle of CONTRACT.md, observed on the real app and PostgreSQL while a
 * request runs: QUEUED when accepted (its image still being fetched), PROCESSING while
 * inference runs, then DONE; the row and a lookup show the state of the moment. Sync and
 * batch alike.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ObjectDetector } from '../../src/recognition/detection.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

let t: TestApp;
let images: ImageServer;
let realDetect: ObjectDetector['detect'];
/** While set, inference (the real model) waits for it: the request stays in inference. */
let hold: Promise<void> | null = null;
let inferring = 0;

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  const detector = t.services.detector;
  realDetect = detector.detect.bind(detector);
  detector.detect = async (image, options) => {
    inferring++;
    if (hold) await hold;
    return realDetect(image, options);
  };
});
after(async () => {
  if (t) t.services.detector.detect = realDetect;
  await images?.close();
  await t?.close();
});

interface Row {
  id: string;
  status: string;
  external_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const rowsOf = (k: TestKey): Promise<Row[]> => t.db('requests').where({ key_id: k.id });

async function lookup(k: TestKey, id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': k.key } });
  assert.equal(res.statusCode, 200, res.body);
  return json<{ status: string; success: boolean; results: unknown[]; error?: string; external_id: string }>(res);
}

/** Polls until the key's request row is in `status`, then checks the row and the lookup agree. */
async function seeState(k: TestKey, status: 'QUEUED' | 'PROCESSING'): Promise<Row> {
  const row = await eventually(async () => {
    const rows = await rowsOf(k);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, status);
    return rows[0];
  }, { what: `the request ${status}`, intervalMs: 10 });
  assert.equal(row.started_at === null, status === 'QUEUED', 'started_at is set exactly when inference starts');
  assert.equal(row.finished_at, null);
  const seen = await lookup(k, row.id);
  assert.deepEqual([seen.status, seen.success, seen.results, seen.error], [status, false, [], undefined]);
  return row;
}

async function lifecycle(k: TestKey, submit: () => Promise<{ statusCode: number; body: string }>): Promise<{ row: Row; body: string }> {
  let release!: () => void;
  hold = new Promise((r) => (release = r));
  const before = inferring;
  const answer = submit();
  try {
    // The image server takes 1.5 s to answer: accepted and charged, the request waits QUEUED.
    const queued = await seeState(k, 'QUEUED');
    // The image arrived and inference started (held here): PROCESSING, not before.
    await eventually(() => inferring === before + 1, { what: 'inference started', intervalMs: 10 });
    const processing = await seeState(k, 'PROCESSING');
    assert.equal(processing.id, queued.id);
  } finally {
    release();
    hold = null;
  }
  const res = await answer;
  assert.equal(res.statusCode, 200, res.body);
  const [row] = await rowsOf(k);
  assert.equal(row.status, 'DONE');
  assert.ok(row.created_at <= row.started_at! && row.started_at! <= row.finished_at!);
  assert.equal((await lookup(k, row.id)).status, 'DONE');
  return { row, body: res.body };
}

test('sync: QUEUED while the image is fetched, PROCESSING during inference, then DONE', async () => {
  const k = await t.newKey();
  const { row, body } = await lifecycle(k, () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': k.key },
      payload: { external_id: 'life-sync', image_url: images.url('/slow?ms=1500') },
    }),
  );
  const result = JSON.parse(body) as { request_id: string; status: string; external_id: string };
  assert.deepEqual([result.request_id, result.status, result.external_id], [row.id, 'DONE', 'life-sync']);
});

test('sync: a repeat while the first is still QUEUED is 409 REQUEST_IN_PROGRESS', async () => {
  const k = await t.newKey();
  const payload = { external_id: 'life-409', image_url: images.url('/slow?ms=1500') };
  const send = () => t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': k.key }, payload });
  const first = send();
  await eventually(async () => (await rowsOf(k))[0]?.status === 'QUEUED', { what: 'the first request QUEUED', intervalMs: 10 });
  const repeat = await send();
  assert.equal(repeat.statusCode, 409, repeat.body);
  assert.equal(json(repeat).error_code, 'REQUEST_IN_PROGRESS');
  assert.equal((await first).statusCode, 200);
});

test('batch: each image QUEUED while fetched, PROCESSING during inference, then DONE', async () => {
  const k = await t.newKey();
  const { row, body } = await lifecycle(k, () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/batch',
      headers: { 'x-api-key': k.key },
      payload: { image_urls: [images.url('/slow?ms=1500')] },
    }),
  );
  const batch = JSON.parse(body) as { batch_id: string; results: Array<{ request_id: string; status: string }> };
  assert.deepEqual([batch.results[0].request_id, batch.results[0].status], [row.id, 'DONE']);
  assert.equal(row.external_id, batch.batch_id, 'the assigned batch id is the image request\'s external_id');
});
