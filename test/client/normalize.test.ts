/** The SDK reads both sync shapes of the spec into one result type. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeBatch, normalizeFeedback, normalizeResult, UnexpectedResponseError } from '@recognition-service/client';

const box = { x: 28, y: 78, width: 144, height: 394 };

test('CVResult: request_id, label, external_id, model, processing time', () => {
  const r = normalizeResult(
    {
      success: true, request_id: '3b52482a-6374-42ae-bbb7-f3d901ac7aa9', external_id: 'order-43', status: 'DONE',
      image_url: 'http://cv.test/v1/cv/images/x', response_code: 200, processing_time_ms: 251,
      results: [{ label: 'person', external_id: 'coco:1', bounding_box: box, confidence: 0.77 }],
      model: { name: 'centernet', version: '1' },
    },
    true,
  );
  assert.equal(r.requestId, '3b52482a-6374-42ae-bbb7-f3d901ac7aa9');
  assert.equal(r.externalId, 'order-43');
  assert.equal(r.success, true);
  assert.equal(r.replayed, true);
  assert.equal(r.processingTimeMs, 251);
  assert.deepEqual(r.model, { name: 'centernet', version: '1' });
  assert.deepEqual(r.detections, [{ label: 'person', productId: 'coco:1', boundingBox: box, confidence: 0.77 }]);
});

test("the guides' shape: idempotency_id, class_name, model_name, no success field", () => {
  const r = normalizeResult({
    idempotency_id: 'idem-1', external_id: 'order-44', status: 'DONE', processing_time_ms: 90,
    results: [{ class_name: 'bottle', model_name: 'shelf-v2', confidence: 0.5, bounding_box: box }],
  });
  assert.equal(r.requestId, 'idem-1');
  assert.equal(r.success, true, 'DONE without a success field counts as success');
  assert.equal(r.replayed, false);
  assert.deepEqual(r.detections, [{ label: 'bottle', modelName: 'shelf-v2', confidence: 0.5, boundingBox: box }]);
});

test('an ERROR result keeps its error and response code; PROCESSING has no detections', () => {
  const e = normalizeResult({ success: false, request_id: 'a', external_id: 'b', status: 'ERROR', error: 'image could not be decoded', response_code: 422, results: [] });
  assert.equal(e.success, false);
  assert.equal(e.error, 'image could not be decoded');
  assert.equal(e.responseCode, 422);
  const p = normalizeResult({ request_id: 'a', external_id: 'b', status: 'PROCESSING' });
  assert.equal(p.success, false);
  assert.deepEqual(p.detections, []);
});

test('answers that are neither shape are refused with the body kept', () => {
  for (const body of [null, [], 'text', { status: 'DONE' }, { request_id: 'a', status: 'WEIRD' }, { request_id: 'a', status: 'DONE', results: [{ bounding_box: box }] }, { request_id: 'a', status: 'DONE', results: [{ label: 'x', bounding_box: { x: 1 } }] }]) {
    assert.throws(() => normalizeResult(body), (err: unknown) => err instanceof UnexpectedResponseError && err.body === body, JSON.stringify(body));
  }
});

test('batch entries, failed ones with a null request id', () => {
  const b = normalizeBatch({
    success: true, batch_id: 'b1', total_images: 2,
    results: [
      { image_url: 'http://a/1.png', request_id: 'r1', status: 'DONE', success: true, error: null, results: [{ label: 'cat', external_id: 'coco:17', bounding_box: box }], response_code: 200 },
      { image_url: 'http://a/2.png', request_id: null, status: 'FAILED', success: false, error: 'download failed', results: [], response_code: 404 },
    ],
  });
  assert.equal(b.batchId, 'b1');
  assert.equal(b.totalImages, 2);
  assert.equal(b.results[0].detections[0].productId, 'coco:17');
  assert.equal(b.results[1].requestId, null);
  assert.equal(b.results[1].error, 'download failed');
  assert.equal(b.results[1].responseCode, 404);
});

test('feedback answer', () => {
  assert.deepEqual(normalizeFeedback({ status: 'success', message: 'ok', request_id: 'r', rating: -1 }), { requestId: 'r', rating: -1, status: 'success', message: 'ok' });
  assert.throws(() => normalizeFeedback({ request_id: 'r', rating: 2 }), UnexpectedResponseError);
});
