/**
 * TritonBackend (the API's gRPC path) against the local v2 server on loopback, with the
 * real model: the same tensors as the embedded backend, readiness, deadlines, a server
 * that dies mid-request and comes back on the same port while the client lives on.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { InferenceError, type InferenceBackend, type Tensor } from '../../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { prepareImage } from '../../src/inference/preprocess.js';
import { TritonBackend } from '../../src/inference/triton/triton-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { createDetector } from '../../src/inference/create-detector.js';
import { loadConfig } from '../../src/config.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';

const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const MODEL = 'centernet';
const MODEL_PATH = path.join(MODEL_REPOSITORY, MODEL, '1', 'model.onnx');
const THREADS = 2;
const FIXTURES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;

async function imageInput(name: (typeof FIXTURES)[number]): Promise<Tensor> {
  const prepared = await prepareImage(readFixture(name), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
  return { name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: prepared.tensor };
}

async function rejectsWith(p: Promise<unknown>, code: InferenceError['code'], message: RegExp = /./): Promise<InferenceError> {
  let caught: InferenceError | undefined;
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof InferenceError, `expected an InferenceError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    caught = err;
    return true;
  });
  return caught!;
}

describe('TritonBackend ↔ local v2 server', () => {
  let server: V2Server;
  let port: number;
  let embedded: OnnxRuntimeBackend;
  let triton: TritonBackend;
  const inputs = new Map<string, Tensor>();
  /** Resolves when the server's model next starts an inference. */
  let nextInferStarted: Promise<void> = Promise.resolve();

  /** The real ORT backend, with a hook telling the test when a run starts. */
  function serverBackend(m: { modelPath: string; config: { name: string }; version: string }): InferenceBackend {
    const backend = new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: THREADS });
    const infer = backend.infer.bind(backend);
    let signal = (): void => {};
    nextInferStarted = new Promise((r) => (signal = r));
    backend.infer = (tensors, options) => {
      signal();
      nextInferStarted = new Promise((r) => (signal = r));
      return infer(tensors, options);
    };
    return backend;
  }

  const start = (grpcPort: number): Promise<V2Server> =>
    startV2Server({ modelRepository: MODEL_REPOSITORY, host: '127.0.0.1', grpcPort, httpPort: null, createBackend: serverBackend });

  before(async () => {
    server = await start(0);
    port = server.grpcPort;
    embedded = new OnnxRuntimeBackend({ modelPath: MODEL_PATH, modelName: MODEL, modelVersion: '1', threads: THREADS });
    triton = new TritonBackend({ url: `127.0.0.1:${port}`, modelName: MODEL });
    await Promise.all([embedded.start(), triton.start()]);
    for (const f of FIXTURES) inputs.set(f, await imageInput(f));
  });

  after(async () => {
    await triton?.close();
    await embedded?.close();
    await server?.close({ graceMs: 1_000 });
  });

  test('metadata over gRPC matches the embedded session', () => {
    const a = triton.metadata();
    const b = embedded.metadata();
    assert.equal(triton.kind, 'triton');
    assert.equal(a.name, MODEL);
    assert.equal(a.version, '1');
    assert.equal(a.platform, 'onnxruntime_onnx');
    assert.deepEqual(a.inputs, b.inputs);
    assert.deepEqual(a.outputs, b.outputs);
    assert.equal(triton.maxBatchSize, 8, 'max_batch_size of config.pbtxt, read through ModelConfig');
  });

  for (const f of FIXTURES) {
    test(`${f}: every output tensor is identical to the embedded backend's, bit for bit`, async () => {
      const input = inputs.get(f)!;
      const viaGrpc = await triton.infer([input]);
      const local = await embedded.infer([input]);
      assert.deepEqual([...viaGrpc.keys()].sort(), [...local.keys()].sort());
      for (const [name, t] of local) {
        const g = viaGrpc.get(name)!;
        assert.equal(g.datatype, t.datatype);
        assert.deepEqual(g.shape, t.shape);
        assert.equal(g.data.constructor, t.data.constructor);
        assert.ok(Buffer.from(g.data.buffer, g.data.byteOffset, g.data.byteLength).equals(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)), `${name} differs`);
      }
    });
  }

  test('TRITON_URL selects the gRPC backend; its detections equal the embedded detector\'s on every fixture', async () => {
    const env = { MODEL_REPOSITORY: MODEL_REPOSITORY, INFERENCE_THREADS: String(THREADS) };
    const viaGrpc = await createDetector(loadConfig({ ...env, TRITON_URL: `127.0.0.1:${port}` }));
    const local = await createDetector(loadConfig(env));
    try {
      assert.equal(viaGrpc.backend.kind, 'triton');
      assert.equal(local.backend.kind, 'onnxruntime');
      let people = 0;
      for (const f of FIXTURES) {
        const bytes = readFixture(f);
        const a = await viaGrpc.detector.detect(bytes);
        const b = await local.detector.detect(bytes);
        assert.deepEqual(a.detections, b.detections, f);
        assert.deepEqual([a.width, a.height], [b.width, b.height]);
        people += a.detections.filter((d) => d.label === 'person').length;
      }
      assert.ok(people >= 2, 'the fixtures with people yield person detections (a real comparison, not two empty lists)');
    } finally {
      await viaGrpc.backend.close();
      await local.backend.close();
    }
  });

  test('ready() is ServerReady && ModelReady: an unknown model is not ready, and start() says why', async () => {
    assert.equal(await triton.ready(), true);
    const wrong = new TritonBackend({ url: `127.0.0.1:${port}`, modelName: 'no-such-model', startTimeoutMs: 300 });
    try {
      assert.equal(await wrong.ready(), false);
      await rejectsWith(wrong.start(), 'MODEL_NOT_READY', /no-such-model is not ready/);
    } finally {
      await wrong.close();
    }
    const wrongVersion = new TritonBackend({ url: `127.0.0.1:${port}`, modelName: MODEL, modelVersion: '42' });
    assert.equal(await wrongVersion.ready(), false);
    await wrongVersion.close();
  });

  test('close() ends a start still waiting for the model, instead of polling on to its timeout', async () => {
    // An hour-long start timeout: only close() can end this start before the test's own timeout.
    const waiting = new TritonBackend({ url: `127.0.0.1:${port}`, modelName: 'no-such-model', startTimeoutMs: 3_600_000 });
    const started = waiting.start();
    await waiting.close();
    await rejectsWith(started, 'UNAVAILABLE', /closed while waiting/);
  });

  test('a deadline shorter than the model run: DEADLINE_EXCEEDED; an expired one is not sent at all', async () => {
    const input = inputs.get('camera.png')!;
    await rejectsWith(triton.infer([input], { deadline: Date.now() + 30 }), 'DEADLINE_EXCEEDED', /DEADLINE_EXCEEDED/);
    await rejectsWith(triton.infer([input], { deadline: Date.now() - 1 }), 'DEADLINE_EXCEEDED', /before the call/);
    const e = await rejectsWith(triton.infer([input], { deadline: Date.now() + 30 }), 'DEADLINE_EXCEEDED');
    assert.equal(e.responseCode, 504);
  });

  test('the caller aborting: CANCELLED', async () => {
    const ac = new AbortController();
    const p = triton.infer([inputs.get('camera.png')!], { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await rejectsWith(p, 'CANCELLED');
  });

  test('inputs that do not fit the metadata are refused before sending: INVALID_INPUT', async () => {
    await rejectsWith(triton.infer([{ name: 'images', datatype: 'UINT8', shape: [1, 10, 10, 3], data: new Uint8Array(300) }]), 'INVALID_INPUT', /shape \[1,10,10,3\], the model expects \[-1,512,512,3\]/);
    await rejectsWith(triton.infer([{ name: 'pixels', datatype: 'FP32', shape: [1], data: new Float32Array(1) }]), 'INVALID_INPUT', /missing input images/);
    await rejectsWith(triton.infer([{ name: 'images', datatype: 'INT32', shape: [1, 512, 512, 3], data: new Int32Array(512 * 512 * 3) }]), 'INVALID_INPUT', /datatype INT32/);
  });

  test('server stopped mid-request: UNAVAILABLE; back on the same port: the same client recovers', async () => {
    const input = inputs.get('basketball1.png')!;
    const expected = await embedded.infer([input]);

    const started = nextInferStarted;
    const pending = triton.infer([input]);
    const outcome = pending.then(() => undefined, (e: unknown) => e);
    await started; // the request is on the server, inside the model
    await server.close({ graceMs: 0 }); // abrupt: connections cut, nothing drained
    const err = await rejectsWith(Promise.reject(await outcome), 'UNAVAILABLE', /server cancelled the call|UNAVAILABLE: Connection dropped/);
    assert.equal(err.responseCode, 503);

    assert.equal(await triton.ready(), false);
    await rejectsWith(triton.infer([input]), 'UNAVAILABLE', /not sent|No connection established/);

    server = await start(port);
    await eventually(() => triton.ready(), { what: 'ready again without a new client' });
    const again = await triton.infer([input]);
    const a = again.get('detections')!.data as Float32Array;
    const b = expected.get('detections')!.data as Float32Array;
    assert.deepEqual([...a], [...b]);
  });
});
