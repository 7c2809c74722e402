/** The pieces of the Triton adapter that need no server: byte layout, status mapping, what is retried. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Metadata, status as Status, type ServiceError } from '@grpc/grpc-js';
import { InferenceError } from '../../src/inference/backend.js';
import { decodeTensorData, encodeTensorData } from '../../src/inference/triton/tensor-codec.js';
import { inferenceCodeOf, toInferenceError } from '../../src/inference/triton/status-map.js';
import { retry } from '../../src/backoff.js';
import { neverSent, UNSENT_RETRY } from '../../src/inference/triton/retry-unsent.js';

function serviceError(code: Status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${Status[code]}: ${details}`), { code, details, metadata: new Metadata() });
}

describe('raw tensor encoding', () => {
  test('FP32 goes out as little-endian IEEE 754, row-major, no padding', () => {
    const bytes = encodeTensorData({ name: 'x', datatype: 'FP32', shape: [1, 2], data: Float32Array.of(1, -2.5) });
    assert.deepEqual([...bytes], [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0]);
  });

  test('INT64 is 8 little-endian bytes per element', () => {
    const bytes = encodeTensorData({ name: 'x', datatype: 'INT64', shape: [1], data: BigInt64Array.of(258n) });
    assert.deepEqual([...bytes], [2, 1, 0, 0, 0, 0, 0, 0]);
  });

  test('decoding an unaligned protobuf slice round-trips every value', () => {
    const values = Float32Array.from({ length: 600 }, (_, i) => Math.sin(i) * 1000);
    const raw = encodeTensorData({ name: 'd', datatype: 'FP32', shape: [1, 100, 6], data: values });
    const unaligned = Buffer.concat([Buffer.from([7]), raw]).subarray(1); // byteOffset 1
    const t = decodeTensorData('d', 'FP32', [1, 100, 6], unaligned);
    assert.deepEqual(t.shape, [1, 100, 6]);
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual([...t.data], [...values]);
  });

  test('a byte count that does not match the shape is refused, naming the tensor', () => {
    assert.throws(() => decodeTensorData('detections', 'FP32', [1, 100, 6], new Uint8Array(2399)), /detections: 2399 bytes .* \(expected 2400\)/);
    assert.throws(() => encodeTensorData({ name: 'images', datatype: 'FP32', shape: [1, 2, 2, 3], data: new Float32Array(11) }), /images: 11 elements/);
  });
});

describe('gRPC status → InferenceError', () => {
  const cases: Array<[Status, InferenceError['code'], number]> = [
    [Status.UNAVAILABLE, 'UNAVAILABLE', 503],
    [Status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 504],
    [Status.NOT_FOUND, 'MODEL_NOT_READY', 503],
    [Status.FAILED_PRECONDITION, 'MODEL_NOT_READY', 503],
    [Status.INVALID_ARGUMENT, 'INVALID_INPUT', 400],
    [Status.RESOURCE_EXHAUSTED, 'RESOURCE_EXHAUSTED', 503],
    [Status.CANCELLED, 'CANCELLED', 499],
    [Status.INTERNAL, 'INTERNAL', 500],
    [Status.UNKNOWN, 'INTERNAL', 500],
    [Status.UNIMPLEMENTED, 'INTERNAL', 500],
  ];
  for (const [grpcCode, code, http] of cases) {
    test(`${Status[grpcCode]} → ${code} (response_code ${http})`, () => {
      assert.equal(inferenceCodeOf(grpcCode), code);
      const e = toInferenceError(serviceError(grpcCode, 'details here'), 'ModelInfer on t:1');
      assert.ok(e instanceof InferenceError);
      assert.equal(e.code, code);
      assert.equal(e.responseCode, http);
      assert.match(e.message, new RegExp(`^ModelInfer on t:1: ${Status[grpcCode]}: details here$`));
    });
  }
});

describe('retry only what never left the client', () => {
  test('the grpc-js picker failure (no connection) counts as never sent; a dropped connection does not', () => {
    assert.equal(neverSent(serviceError(Status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1')), true);
    assert.equal(neverSent(serviceError(Status.UNAVAILABLE, 'round_robin: No connection established. Last error: x')), true);
    assert.equal(neverSent(serviceError(Status.UNAVAILABLE, 'Connection dropped')), false);
    assert.equal(neverSent(serviceError(Status.UNAVAILABLE, 'model centernet is not ready')), false);
    assert.equal(neverSent(serviceError(Status.DEADLINE_EXCEEDED, 'No connection established')), false);
  });

  test('retries a never-sent failure, up to the limit, and nothing else', async () => {
    let calls = 0;
    const ok = await retry(async () => {
      calls++;
      if (calls < 3) throw serviceError(Status.UNAVAILABLE, 'No connection established');
      return 'done';
    }, UNSENT_RETRY);
    assert.equal(ok, 'done');
    assert.equal(calls, 3);

    calls = 0;
    await assert.rejects(retry(async () => {
      calls++;
      throw serviceError(Status.UNAVAILABLE, 'Connection dropped');
    }, UNSENT_RETRY), /Connection dropped/);
    assert.equal(calls, 1);
  });
});

test('status details reaching API clients carry no server address or grpc-js timing notes', async () => {
  const { publicDetails } = await import('../../src/inference/triton/status-map.js');
  assert.equal(publicDetails('Deadline exceeded after 0.030s,metadata filters: 0.001s,remote_addr=10.1.2.3:8001'), 'Deadline exceeded after 0.030s');
  assert.equal(publicDetails('No connection established. Last error: connect ECONNREFUSED 127.0.0.1:8001'), 'No connection established. Last error: connect ECONNREFUSED <server>');
  assert.equal(publicDetails("Request for unknown model: 'x' is not found"), "Request for unknown model: 'x' is not found");
  const e = toInferenceError(serviceError(Status.UNAVAILABLE, 'connect ECONNREFUSED [::1]:8001'), 'ModelInfer');
  assert.doesNotMatch(e.message, /::1|8001/);
});
