import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { InferenceError, type Tensor } from '../../src/inference/backend.js';
import { createInferenceBackend } from '../../src/inference/create-backend.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { eventually } from '../helpers/eventually.js';
import { INPUT_SHAPE, testConfig } from './model.js';

/** The prepared model takes UINT8 pixels: an image of one grey level, `fill` 0–255. */
function image(fill: number, batch = 1): Tensor {
  const shape = [batch, ...INPUT_SHAPE.slice(1)];
  return { name: 'images', datatype: 'UINT8', shape, data: new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(fill) };
}

function isInferenceError(code: string, message?: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof InferenceError, `expected InferenceError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (message) assert.match(err.message, message);
    return true;
  };
}

describe('OnnxRuntimeBackend with the real model', () => {
  let backend: OnnxRuntimeBackend;

  before(async () => {
    backend = (await createInferenceBackend(testConfig({ INFERENCE_THREADS: '2' }))) as OnnxRuntimeBackend;
    assert.ok(backend instanceof OnnxRuntimeBackend);
    await backend.start();
  });
  after(() => backend?.close());

  test('is ready and describes the model from the session', async () => {
    assert.equal(await backend.ready(), true);
    assert.equal(backend.kind, 'onnxruntime');
    assert.deepEqual(backend.metadata(), {
      name: 'centernet',
      version: '1',
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'images', datatype: 'UINT8', shape: [-1, 512, 512, 3] }],
      outputs: [{ name: 'detections', datatype: 'FP32', shape: [-1, 100, 6] }],
    });
  });

  test('concurrent callers are all served, in order, with the same answer for the same input', async () => {
    const before = backend.completedRuns;
    const order: number[] = [];
    const results = await Promise.all([0, 1, 2, 3].map((i) => backend.infer([image(128)]).then((r) => (order.push(i), r))));
    assert.deepEqual(order, [0, 1, 2, 3]);
    assert.equal(backend.completedRuns, before + 4);
    const first = results[0].get('detections');
    assert.ok(first);
    assert.deepEqual(first.shape, [1, 100, 6]);
    assert.equal(first.datatype, 'FP32');
    for (const r of results) assert.deepEqual(r.get('detections')?.data, first.data);
  });

  test('the event loop keeps turning while the session runs (it runs on its own thread)', async () => {
    let done = false;
    const running = backend.infer([image(50)]).then(() => (done = true));
    // In-thread onnxruntime-node would run synchronously in its own setImmediate and
    // finish before this one gets its turn.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(done, false);
    await running;
    assert.equal(done, true);
  });

  test('serves a batch: one output row block per image', async () => {
    const out = (await backend.infer([image(90, 2)])).get('detections');
    assert.deepEqual(out?.shape, [2, 100, 6]);
    const single = (await backend.infer([image(90)])).get('detections');
    // Both images are the same, so both halves match the single-image answer.
    const rows = out.data as Float32Array;
    assert.ok(Math.abs(rows[4] - (single!.data as Float32Array)[4]) < 1e-4);
    assert.ok(Math.abs(rows[600 + 4] - rows[4]) < 1e-4);
  });

  test('a caller whose deadline has passed is rejected without running', async () => {
    const before = backend.completedRuns;
    await assert.rejects(backend.infer([image(1)], { deadline: Date.now() - 1 }), isInferenceError('DEADLINE_EXCEEDED'));
    assert.equal(backend.completedRuns, before);
  });

  test('a caller whose deadline passes while queued is rejected and never runs', async () => {
    const before = backend.completedRuns;
    const first = backend.infer([image(2)]);
    // A 512×512 CenterNet run takes far longer than 1 ms, so this one expires in the queue.
    const second = backend.infer([image(3)], { deadline: Date.now() + 1 });
    await assert.rejects(second, isInferenceError('DEADLINE_EXCEEDED'));
    await first;
    assert.equal(backend.completedRuns, before + 1);
  });

  test('a queued caller that aborts is rejected as CANCELLED and never runs; an aborted signal is refused up front', async () => {
    const before = backend.completedRuns;
    const first = backend.infer([image(4)]);
    const controller = new AbortController();
    const second = backend.infer([image(5)], { signal: controller.signal });
    assert.equal(backend.queueDepth, 1);
    controller.abort();
    await assert.rejects(second, isInferenceError('CANCELLED'));
    assert.equal(backend.queueDepth, 0);
    await first;
    assert.equal(backend.completedRuns, before + 1);
    await assert.rejects(backend.infer([image(6)], { signal: controller.signal }), isInferenceError('CANCELLED'));
  });

  test('inputs that do not fit the model are INVALID_INPUT before reaching the session', async () => {
    const t = image(0);
    await assert.rejects(backend.infer([{ ...t, name: 'pixels' }]), isInferenceError('INVALID_INPUT', /no input named "pixels"/));
    await assert.rejects(backend.infer([]), isInferenceError('INVALID_INPUT', /missing input tensor "images"/));
    await assert.rejects(backend.infer([{ ...t, shape: [1, 256, 256, 3] }]), isInferenceError('INVALID_INPUT', /shape \[1,256,256,3\]/));
    await assert.rejects(backend.infer([{ ...t, datatype: 'INT32', data: new Int32Array(t.data.length) }]), isInferenceError('INVALID_INPUT', /must be UINT8/));
    await assert.rejects(backend.infer([{ ...t, data: new Uint8Array(10) }]), isInferenceError('INVALID_INPUT', /needs 786432 UINT8 values, got 10/));
    await assert.rejects(backend.infer([{ ...t, data: new Float32Array(t.data.length) }]), isInferenceError('INVALID_INPUT', /needs 786432 UINT8 values, got 786432 in a Float32Array/));
    assert.equal(await backend.ready(), true);
  });

  test('the caller keeps its input buffer (inputs are copied, not transferred)', async () => {
    const t = image(7);
    await backend.infer([t]);
    assert.equal(t.data.length, 512 * 512 * 3);
    assert.equal(t.data[0], 7);
  });

  test('an input on shared memory (read by the session thread in place) gives the same outputs as a copied one', async () => {
    const copied = await backend.infer([image(102)]);
    const t = image(102);
    const data = new Uint8Array(new SharedArrayBuffer(t.data.byteLength));
    data.set(t.data as Uint8Array);
    const shared = await backend.infer([{ ...t, data }]);
    assert.deepEqual([...shared.keys()], [...copied.keys()]);
    for (const [name, want] of copied) assert.deepEqual(shared.get(name)!.data, want.data);
    assert.equal(data[0], 102, 'the input is left as it was');
  });
});

describe('OnnxRuntimeBackend lifecycle', () => {
  test('a missing model file fails start() with MODEL_NOT_READY naming the file', async () => {
    const b = new OnnxRuntimeBackend({ modelPath: '/nonexistent/model.onnx', modelName: 'x' });
    await assert.rejects(b.start(), isInferenceError('MODEL_NOT_READY', /\/nonexistent\/model\.onnx/));
    assert.equal(await b.ready(), false);
    await b.close();
  });

  test('before start: not ready, no metadata, infer refused', async () => {
    const b = new OnnxRuntimeBackend({ modelPath: '/nonexistent/model.onnx', modelName: 'x' });
    assert.equal(await b.ready(), false);
    assert.throws(() => b.metadata(), isInferenceError('MODEL_NOT_READY'));
    await assert.rejects(b.infer([image(0)]), isInferenceError('MODEL_NOT_READY'));
  });

  test('a session thread that dies makes the backend UNAVAILABLE, then it is relaunched and serves again', async () => {
    const b = (await createInferenceBackend(testConfig({ INFERENCE_THREADS: '1' }))) as OnnxRuntimeBackend;
    await b.start();
    try {
      // Stand-in for a crash of an idle thread. (Terminating a thread in the middle of
      // session.run can abort the process inside onnxruntime-node, which is why close()
      // waits for the run in progress.)
      await (b as unknown as { worker: Worker }).worker.terminate();
      assert.equal(await b.ready(), false);
      await assert.rejects(b.infer([image(22)]), isInferenceError('UNAVAILABLE', /down/));
      // Relaunch after 0.5 s plus model load and warm-up.
      await eventually(() => b.ready(), { what: 'the relaunched inference thread ready', timeoutMs: 60_000 });
      assert.deepEqual((await b.infer([image(23)])).get('detections')?.shape, [1, 100, 6]);
    } finally {
      await b.close();
    }
  });

  test('close() during the warm-up waits for it, then start() reports the close', async () => {
    const b = await createInferenceBackend(testConfig({ INFERENCE_THREADS: '1' }));
    const starting = assert.rejects(b.start(), isInferenceError('UNAVAILABLE', /closed while starting/));
    await b.close();
    await starting;
    assert.equal(await b.ready(), false);
  });

  test('close() lets the running inference finish, refuses the queued ones, then refuses new calls', async () => {
    const b = await createInferenceBackend(testConfig({ INFERENCE_THREADS: '1' }));
    await b.start();
    const running = b.infer([image(10)]);
    const queued = b.infer([image(11)]);
    const closing = b.close();
    await assert.rejects(queued, isInferenceError('UNAVAILABLE', /shutting down/));
    assert.deepEqual((await running).get('detections')?.shape, [1, 100, 6]);
    await closing;
    assert.equal(await b.ready(), false);
    await assert.rejects(b.infer([image(12)]), isInferenceError('UNAVAILABLE', /closed/));
  });
});

describe('OnnxRuntimeBackend with dynamic batching (INFERENCE_MAX_BATCH)', () => {
  let single: OnnxRuntimeBackend;
  let batched: OnnxRuntimeBackend;

  before(async () => {
    single = (await createInferenceBackend(testConfig({ INFERENCE_THREADS: '2' }))) as OnnxRuntimeBackend;
    batched = (await createInferenceBackend(testConfig({ INFERENCE_THREADS: '2', INFERENCE_MAX_BATCH: '4' }))) as OnnxRuntimeBackend;
    await single.start();
    await batched.start();
  });
  after(async () => {
    await single?.close();
    await batched?.close();
  });

  test('concurrent calls coalesced into batches give each caller exactly its batch-1 outputs', async () => {
    const fills = [25, 128, 230, 77, 179, 51];
    const expected: Array<Map<string, Tensor>> = [];
    for (const f of fills) expected.push(await single.infer([image(f)]));
    const runsBefore = batched.completedRuns;
    const executionsBefore = batched.completedExecutions;
    // The first call occupies the session; the other five wait and are run together.
    const got = await Promise.all(fills.map((f) => batched.infer([image(f)])));
    assert.equal(batched.completedRuns - runsBefore, fills.length);
    assert.ok(batched.completedExecutions - executionsBefore < fills.length, 'some calls shared a session run');
    got.forEach((outputs, i) => {
      const want = expected[i];
      assert.deepEqual([...outputs.keys()].sort(), [...want.keys()].sort());
      for (const [name, t] of want) {
        const o = outputs.get(name)!;
        assert.deepEqual(o.shape, t.shape, `${name} of call ${i} has batch-1 shape`);
        const a = t.data as Float32Array;
        const b = o.data as Float32Array;
        let worst = 0;
        for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
        assert.ok(worst < 1e-4, `${name} of call ${i} differs from its batch-1 output by ${worst}`);
      }
    });
    // Distinct inputs give distinct outputs: rows were not mixed up or repeated.
    const first = [...got[0].values()][0].data as Float32Array;
    const second = [...got[1].values()][0].data as Float32Array;
    assert.notDeepEqual(first.slice(0, 64), second.slice(0, 64));
  });

  test('batch buffers are reused: later batches, in another order, still give each caller its own outputs', async () => {
    const fills = [204, 38, 153, 89, 13];
    const expected = new Map<number, Map<string, Tensor>>();
    for (const f of fills) expected.set(f, await single.infer([image(f)]));
    for (const order of [fills, [...fills].reverse(), [fills[2], fills[0], fills[4], fills[1], fills[3]]]) {
      const executionsBefore = batched.completedExecutions;
      const got = await Promise.all(order.map((f) => batched.infer([image(f)])));
      assert.ok(batched.completedExecutions - executionsBefore < order.length, 'some calls shared a session run');
      got.forEach((outputs, i) => {
        for (const [name, t] of expected.get(order[i])!) {
          const a = t.data as Float32Array;
          const b = outputs.get(name)!.data as Float32Array;
          let worst = 0;
          for (let k = 0; k < a.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
          assert.ok(worst < 1e-4, `${name} of the call with fill ${order[i]} differs from its own batch-1 output by ${worst}`);
        }
      });
    }
  });
});
