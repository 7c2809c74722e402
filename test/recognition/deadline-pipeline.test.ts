import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ImageError } from '../../src/images/errors.js';
import type { FetchedImage } from '../../src/images/types.js';
import { InferenceError } from '../../src/inference/backend.js';
import { DeadlinePipeline, filterByClasses, TIMEOUT_MESSAGE } from '../../src/recognition/deadline-pipeline.js';
import type { DetectionOutcome, DetectOptions } from '../../src/recognition/detection.js';
import { caller, deferred, holdEventLoop, InMemoryRequests, newRequest, recordingLogger } from './fakes.js';

after(holdEventLoop());

const image: FetchedImage = { bytes: Buffer.from('jpeg'), format: 'jpeg', mime: 'image/jpeg', finalUrl: 'https://img.example/a.jpg', status: 200 };
const d = (label: string) => ({ label, external_id: label, confidence: 0.9, bounding_box: { x: 0, y: 0, width: 1, height: 1 } });
const outcome = (labels: string[]): DetectionOutcome => ({
  detections: labels.map(d),
  width: 10,
  height: 10,
  model: { name: 'centernet', version: '1' },
  timings: { decodeMs: 0, inferMs: 0, postprocessMs: 0 },
});

function setup(detect: (bytes: Uint8Array, o?: DetectOptions) => Promise<DetectionOutcome>, fetch: () => Promise<FetchedImage> = async () => image) {
  const requests = new InMemoryRequests();
  const stored = new Map<string, unknown>();
  const logger = recordingLogger();
  const pipeline = new DeadlinePipeline({
    requests,
    detector: { detect },
    fetcher: { fetch },
    imageStore: { put: async (id, img) => void stored.set(id, img), delete: async (id) => void stored.delete(id) },
    logger,
  });
  return { requests, stored, logger, pipeline };
}

/** A request admitted as the service admits it, sync or batch: QUEUED, charged one unit. */
async function claimed(requests: InMemoryRequests, kind: 'sync' | 'batch' = 'sync') {
  const a = await requests.charge({ keyId: 'key-1', orgId: 'org-1', quota: 100, month: '2026-11', idempotent: kind === 'sync', status: 'QUEUED', requests: [newRequest({ kind })] });
  assert.equal(a.outcome, 'charged');
  return a.outcome === 'charged' ? a.records[0] : assert.fail();
}

test('an image within its deadline ends DONE with only the caller\'s classes, image stored', async () => {
  const { requests, stored, pipeline } = setup(async () => outcome(['person', 'dog']));
  const record = await claimed(requests);
  const out = await pipeline.run({ ...caller, classes: ['dog'] }, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(out.kind, 'finished');
  assert.equal(out.kind === 'finished' && out.record.status, 'DONE');
  assert.deepEqual(out.kind === 'finished' && out.record.results.map((r) => r.label), ['dog']);
  assert.ok(stored.has(record.id));
  assert.equal(out.kind === 'finished' && out.record.imageStored, true);
  // QUEUED when charged, PROCESSING as inference starts, then the ending.
  assert.deepEqual(requests.calls, ['charge', 'markProcessing', 'finishDone']);
});

for (const kind of ['sync', 'batch'] as const) {
  test(`${kind}: QUEUED while its image is fetched, PROCESSING while inference runs, then DONE`, async () => {
    const fetched = deferred<FetchedImage>();
    const inferred = deferred<DetectionOutcome>();
    let detecting = false;
    const { requests, pipeline } = setup(
      () => {
        detecting = true;
        return inferred.promise;
      },
      () => fetched.promise,
    );
    const record = await claimed(requests, kind);
    const status = () => requests.rows.get(record.id)?.status;
    assert.equal(record.status, 'QUEUED');
    const run = pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
    await new Promise((r) => setImmediate(r));
    assert.equal(status(), 'QUEUED', 'the image is still being fetched');
    fetched.resolve(image);
    while (!detecting) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(status(), 'PROCESSING');
    assert.ok(requests.rows.get(record.id)?.startedAt instanceof Date);
    inferred.resolve(outcome(['person']));
    const out = await run;
    assert.equal(out.kind === 'finished' && out.record.status, 'DONE');
    assert.equal(status(), 'DONE');
  });
}

test('the PROCESSING write does not hold up inference, and the ending waits for it', async () => {
  let detecting = false;
  const { requests, pipeline } = setup(async () => {
    detecting = true;
    return outcome(['person']);
  });
  const answered = deferred<void>();
  const markProcessing = requests.markProcessing.bind(requests);
  requests.markProcessing = async (id) => {
    const ok = await markProcessing(id);
    await answered.promise; // the database has not answered yet
    return ok;
  };
  const record = await claimed(requests);
  const run = pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  // Inference started (and finished) while the PROCESSING write was still unanswered…
  assert.ok(detecting, 'inference waited for the PROCESSING write');
  // …and the ending waits for that answer, so DONE can never be overwritten or come first.
  assert.deepEqual(requests.calls, ['charge', 'markProcessing']);
  answered.resolve();
  const out = await run;
  assert.equal(out.kind === 'finished' && out.record.status, 'DONE');
  assert.deepEqual(requests.calls, ['charge', 'markProcessing', 'finishDone']);
});

test('the deadline passing first ends the record ERROR 408 and aborts the detector', async () => {
  let seen: AbortSignal | undefined;
  const { requests, pipeline } = setup(
    (_b, o) =>
      new Promise((_res, rej) => {
        seen = o?.signal;
        o?.signal?.addEventListener('abort', () => rej(new InferenceError('CANCELLED', 'aborted')));
      }),
  );
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 30);
  assert.equal(out.kind, 'timeout');
  assert.equal(seen?.aborted, true);
  const row = requests.rows.get(record.id)!;
  assert.deepEqual([row.status, row.error, row.responseCode], ['ERROR', TIMEOUT_MESSAGE, 408]);
});

test('the backend\'s own deadline firing a moment before ours is still the request timing out: 408, not 504', async () => {
  // gRPC runs its own timer for the deadline it was handed; it can win the race by a few ms.
  const { requests, pipeline } = setup(() => Promise.reject(new InferenceError('DEADLINE_EXCEEDED', 'Deadline exceeded after 1.970s')));
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(out.kind, 'timeout');
  const row = requests.rows.get(record.id)!;
  assert.deepEqual([row.status, row.error, row.responseCode], ['ERROR', TIMEOUT_MESSAGE, 408]);
});

test('finished in the same moment: when the timeout write loses to finishDone, the DONE result stands', async () => {
  const detection = deferred<DetectionOutcome>();
  const { requests, pipeline } = setup(() => detection.promise);
  const finishError = requests.finishError.bind(requests);
  let timeoutWrites = 0;
  // The deadline fires; before the timeout write reaches the "database", detection completes
  // and its finishDone commits first, so the guarded timeout write finds the row ended.
  requests.finishError = async (id, failure) => {
    if (failure.error === TIMEOUT_MESSAGE) {
      timeoutWrites++;
      detection.resolve(outcome(['person']));
      while (requests.rows.get(id)?.status !== 'DONE') await new Promise((r) => setImmediate(r));
    }
    return finishError(id, failure);
  };
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 20);
  assert.equal(timeoutWrites, 1);
  assert.equal(out.kind, 'finished');
  assert.equal(out.kind === 'finished' && out.record.status, 'DONE');
  assert.equal(requests.rows.get(record.id)?.status, 'DONE');
});

test('an address refused after DNS is a refusal: the record is discarded, nothing stored', async () => {
  const { requests, stored, pipeline } = setup(
    async () => outcome([]),
    async () => {
      throw new ImageError('INVALID_IMAGE_URL', 'address not allowed');
    },
  );
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(out.kind === 'refused' && `${out.error.code} ${out.error.message}`, 'INVALID_IMAGE_URL address not allowed');
  assert.equal(requests.rows.has(record.id), false);
  assert.equal(stored.size, 0);
  assert.ok(requests.refunded.has(record.id), 'removing the row gave its charge back');
  assert.equal(requests.used, 0);
});

test('a download failure and an inference failure end ERROR with their response codes', async () => {
  const dl = setup(
    async () => outcome([]),
    async () => {
      throw new ImageError('IMAGE_DOWNLOAD_FAILED', 'upstream 404', 404);
    },
  );
  const r1 = await claimed(dl.requests);
  const o1 = await dl.pipeline.run(caller, r1, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(o1.kind === 'finished' && `${o1.record.status} ${o1.record.responseCode}`, 'ERROR 404');
  assert.equal(o1.kind === 'finished' && o1.record.imageStored, false, 'nothing was kept: no image link');

  const inf = setup(async () => {
    throw new InferenceError('UNAVAILABLE', 'backend down');
  });
  const r2 = await claimed(inf.requests);
  const o2 = await inf.pipeline.run(caller, r2, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(o2.kind === 'finished' && `${o2.record.status} ${o2.record.responseCode} ${o2.record.error}`, 'ERROR 503 inference failed: backend down');
});

test('an unexpected error is internal, logged, and its record never stays unfinished', async () => {
  const { requests, logger, pipeline } = setup(async () => {
    throw new TypeError('bug');
  });
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(out.kind, 'internal');
  assert.deepEqual([requests.rows.get(record.id)?.status, requests.rows.get(record.id)?.responseCode], ['ERROR', 500]);
  assert.ok(requests.refunded.has(record.id), 'a 5xx is not charged');
  assert.deepEqual(logger.errors, ['recognition failed unexpectedly']);
});

test('filterByClasses keeps only mapped labels; "*" keeps all', () => {
  const all = [d('person'), d('dog'), d('person')];
  assert.deepEqual(filterByClasses(all, ['*']), all);
  assert.deepEqual(filterByClasses(all, ['person']).map((x) => x.label), ['person', 'person']);
  assert.deepEqual(filterByClasses(all, ['cat']), []);
});

test('DONE written but unconfirmed (the connection broke): the client gets a 5xx, so the record ends ERROR, refunded', async () => {
  const { requests, pipeline } = setup(async () => outcome(['person']));
  const finishDone = requests.finishDone.bind(requests);
  requests.finishDone = async (id, done) => {
    await finishDone(id, done); // committed…
    throw Object.assign(new Error('Connection terminated unexpectedly'), {}); // …but the reply was lost
  };
  const record = await claimed(requests);
  const out = await pipeline.run(caller, record, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(out.kind, 'internal');
  assert.equal(requests.rows.get(record.id)?.status, 'ERROR');
  assert.ok(requests.refunded.has(record.id));
});

test('a timeout and a failed inference backend are refunded; a download failure keeps its charge', async () => {
  const backendDown = setup(async () => {
    throw new InferenceError('UNAVAILABLE', 'connection refused');
  });
  const r1 = await claimed(backendDown.requests);
  await backendDown.pipeline.run(caller, r1, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(backendDown.requests.rows.get(r1.id)?.status, 'ERROR');
  assert.ok(backendDown.requests.refunded.has(r1.id));

  const slow = setup((_b, o) => new Promise((_res, rej) => o?.signal?.addEventListener('abort', () => rej(new InferenceError('CANCELLED', 'aborted')))));
  const r2 = await claimed(slow.requests);
  const out = await slow.pipeline.run(caller, r2, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 50);
  assert.equal(out.kind, 'timeout');
  assert.ok(slow.requests.refunded.has(r2.id));

  const missing = setup(async () => outcome([]), async () => {
    throw new ImageError('IMAGE_DOWNLOAD_FAILED', 'download failed: HTTP 404', 404);
  });
  const r3 = await claimed(missing.requests);
  await missing.pipeline.run(caller, r3, { kind: 'url', url: 'https://img.example/a.jpg' }, Date.now() + 5_000);
  assert.equal(missing.requests.rows.get(r3.id)?.status, 'ERROR');
  assert.equal(missing.requests.refunded.has(r3.id), false);
});
