/**
 * The local KServe v2 server on loopback with the real model: health, metadata and config
 * from config.pbtxt, gRPC errors for bad requests, dynamic batching seen in its statistics,
 * HTTP endpoints, graceful shutdown. Driven by the same gRPC client the API uses.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InferenceError, type Tensor } from '../../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { prepareImage } from '../../src/inference/preprocess.js';
import { TritonClient } from '../../src/inference/triton/client.js';
import type { ModelInferRequest } from '../../src/inference/triton/messages.js';
import { decodeTensorData, encodeTensorData } from '../../src/inference/triton/tensor-codec.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { parseTritonConfig } from '../../src/models/triton-config.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';

const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const MODEL = 'centernet';
const CONFIG = parseTritonConfig(readFileSync(path.join(MODEL_REPOSITORY, MODEL, 'config.pbtxt'), 'utf8'));
const THREADS = 2;

/** The prepared model takes UINT8 pixels (it casts them to float itself). */
async function imageTensor(name: 'basketball1.png' | 'camera.png' | 'squirrel_cls.jpg'): Promise<Uint8Array> {
  const prepared = await prepareImage(readFixture(name), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
  return prepared.tensor;
}

function inferRequest(images: Uint8Array, rows = 1, overrides: Partial<ModelInferRequest> = {}): ModelInferRequest {
  const tensor: Tensor = { name: 'images', datatype: 'UINT8', shape: [rows, 512, 512, 3], data: images };
  return {
    model_name: MODEL,
    model_version: '',
    id: 'test',
    inputs: [{ name: 'images', datatype: 'UINT8', shape: tensor.shape }],
    outputs: [],
    raw_input_contents: [encodeTensorData(tensor)],
    ...overrides,
  };
}

function detectionsOf(r: { outputs: Array<{ name: string; datatype: string; shape: number[] }>; raw_output_contents: Buffer[] }): Float32Array {
  const i = r.outputs.findIndex((o) => o.name === 'detections');
  assert.ok(i >= 0, 'the response has a detections output');
  return decodeTensorData('detections', 'FP32', r.outputs[i].shape.map(Number), r.raw_output_contents[i]).data as Float32Array;
}

async function rejectsWith(p: Promise<unknown>, code: InferenceError['code'], message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof InferenceError, `expected an InferenceError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

describe('local v2 inference server', () => {
  let server: V2Server;
  let client: TritonClient;
  let basketball: Uint8Array;
  let camera: Uint8Array;

  before(async () => {
    server = await startV2Server({
      modelRepository: MODEL_REPOSITORY,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: THREADS }),
    });
    client = new TritonClient({ url: server.grpcAddress });
    [basketball, camera] = await Promise.all([imageTensor('basketball1.png'), imageTensor('camera.png')]);
  });

  after(async () => {
    client?.close();
    await server?.close({ graceMs: 1_000 });
  });

  test('server and model are live and ready; an unknown model or version is not ready', async () => {
    assert.equal(await client.serverLive(), true);
    assert.equal(await client.serverReady(), true);
    assert.equal(await client.modelReady(MODEL, ''), true);
    assert.equal(await client.modelReady(MODEL, '1'), true);
    assert.equal(await client.modelReady(MODEL, '7'), false);
    assert.equal(await client.modelReady('no-such-model', ''), false);
  });

  test('metadata and config come from config.pbtxt (batch dimension -1 when max_batch_size > 0)', async () => {
    const meta = await client.modelMetadata(MODEL, '');
    assert.equal(meta.name, MODEL);
    assert.deepEqual(meta.versions, ['1']);
    assert.equal(meta.platform, 'onnxruntime_onnx');
    assert.ok(CONFIG.maxBatchSize > 1, 'the prepared model is configured for batching');
    assert.deepEqual(meta.inputs.map((t) => [t.name, t.datatype, t.shape.map(Number)]), [['images', 'UINT8', [-1, 512, 512, 3]]]);
    assert.deepEqual(meta.outputs.map((t) => [t.name, t.datatype, t.shape.map(Number)]), [['detections', 'FP32', [-1, 100, 6]]]);
    const config = await client.modelConfig(MODEL, '');
    assert.equal(config.max_batch_size, CONFIG.maxBatchSize);
    assert.equal(config.input[0].data_type, 'TYPE_UINT8');
    assert.deepEqual(config.input[0].dims.map(Number), [512, 512, 3]);
  });

  test('unknown model: NOT_FOUND, reported as MODEL_NOT_READY', async () => {
    await rejectsWith(client.modelMetadata('no-such-model', ''), 'MODEL_NOT_READY', /NOT_FOUND: Request for unknown model: 'no-such-model'/);
    await rejectsWith(client.modelInfer(inferRequest(basketball, 1, { model_name: 'no-such-model' })), 'MODEL_NOT_READY', /NOT_FOUND/);
    await rejectsWith(client.modelInfer(inferRequest(basketball, 1, { model_version: '3' })), 'MODEL_NOT_READY', /NOT_FOUND: Request for unknown model: 'centernet' version 3 is not found/);
  });

  test('malformed requests: INVALID_ARGUMENT naming what is wrong, nothing run', async () => {
    const before = server.statistics(MODEL)[0];
    const small = new Uint8Array(256 * 256 * 3);
    await rejectsWith(
      client.modelInfer({
        ...inferRequest(basketball),
        inputs: [{ name: 'images', datatype: 'UINT8', shape: [1, 256, 256, 3] }],
        raw_input_contents: [encodeTensorData({ name: 'images', datatype: 'UINT8', shape: [1, 256, 256, 3], data: small })],
      }),
      'INVALID_INPUT',
      /INVALID_ARGUMENT: \[request id: test\] unexpected shape for input 'images' for model 'centernet'. Expected \[-1,512,512,3\], got \[1,256,256,3\]/,
    );
    await rejectsWith(
      client.modelInfer({ ...inferRequest(basketball), inputs: [{ name: 'images', datatype: 'INT32', shape: [1, 512, 512, 3] }] }),
      'INVALID_INPUT',
      /\[request id: test\] inference input 'images' data-type is 'INT32', but model 'centernet' expects 'UINT8'/,
    );
    await rejectsWith(
      client.modelInfer({ ...inferRequest(basketball), raw_input_contents: [encodeTensorData({ name: 'images', datatype: 'UINT8', shape: [10], data: new Uint8Array(10) })] }),
      'INVALID_INPUT',
      /input 'images': 10 bytes of data, but UINT8 \[1,512,512,3\] needs 786432/,
    );
    await rejectsWith(
      client.modelInfer({ ...inferRequest(basketball), inputs: [{ name: 'pixels', datatype: 'UINT8', shape: [1, 512, 512, 3] }] }),
      'INVALID_INPUT',
      /INVALID_ARGUMENT: unexpected inference input 'pixels' for model 'centernet'$/,
    );
    await rejectsWith(client.modelInfer({ ...inferRequest(basketball), inputs: [], raw_input_contents: [] }), 'INVALID_INPUT', /missing 'images'/);
    await rejectsWith(client.modelInfer({ ...inferRequest(basketball), outputs: [{ name: 'boxes' }] }), 'INVALID_INPUT', /unexpected inference output 'boxes'/);
    const tooMany = CONFIG.maxBatchSize + 1;
    await rejectsWith(
      client.modelInfer({ ...inferRequest(basketball), inputs: [{ name: 'images', datatype: 'UINT8', shape: [tooMany, 512, 512, 3] }] }),
      'INVALID_INPUT',
      new RegExp(`INVALID_ARGUMENT: \\[request id: test\\] inference request batch-size must be <= ${CONFIG.maxBatchSize} for 'centernet'$`),
    );
    const after = server.statistics(MODEL)[0];
    assert.equal(after.execution_count, before.execution_count, 'no malformed request reached the model');
  });

  test('concurrent requests are batched: max_batch_size requests run as one execution, each gets its own rows', async () => {
    const alone = new Map([
      ['basketball', detectionsOf(await client.modelInfer(inferRequest(basketball)))],
      ['camera', detectionsOf(await client.modelInfer(inferRequest(camera)))],
    ]);
    // Its own server, whose batches wait up to a minute to fill: max_batch_size requests sent
    // together make exactly one full batch, however slowly they arrive.
    const batching = await startV2Server({
      modelRepository: MODEL_REPOSITORY,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      maxQueueDelayUs: 60_000_000,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: THREADS }),
    });
    const batchingClient = new TritonClient({ url: batching.grpcAddress });
    try {
      const names = Array.from({ length: CONFIG.maxBatchSize }, (_, i) => (i % 2 === 0 ? 'basketball' : 'camera'));
      const responses = await Promise.all(names.map((n) => batchingClient.modelInfer(inferRequest(n === 'basketball' ? basketball : camera))));
      const stats = batching.statistics(MODEL)[0];
      assert.equal(stats.inference_count, CONFIG.maxBatchSize);
      assert.equal(stats.execution_count, 1);
      assert.deepEqual(stats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]), [[CONFIG.maxBatchSize, 1]]);
      assert.equal(stats.inference_stats.success.count, CONFIG.maxBatchSize);
      // Each request gets its own image's rows back, as if it had run alone.
      names.forEach((n, i) => {
        const got = detectionsOf(responses[i]);
        const want = alone.get(n)!;
        assert.equal(got.length, want.length);
        let maxDiff = 0;
        for (let k = 0; k < got.length; k++) maxDiff = Math.max(maxDiff, Math.abs(got[k] - want[k]));
        assert.ok(maxDiff < 1e-3, `request ${i} (${n}): batched rows differ from the lone run by ${maxDiff}`);
      });
    } finally {
      batchingClient.close();
      await batching.close({ graceMs: 1_000 });
    }
  });

  test('a request that asks for two images at once is one request with batch size 2', async () => {
    const two = new Uint8Array(2 * 512 * 512 * 3);
    two.set(basketball, 0);
    two.set(camera, 512 * 512 * 3);
    const start = server.statistics(MODEL)[0];
    const r = await client.modelInfer(inferRequest(two, 2));
    assert.deepEqual(r.outputs[0].shape.map(Number), [2, 100, 6]);
    const end = server.statistics(MODEL)[0];
    assert.equal(end.inference_count - start.inference_count, 2);
    assert.equal(end.inference_stats.success.count - start.inference_stats.success.count, 1);
  });

  test('HTTP: health, model readiness, metadata and statistics on the paths Triton uses', async () => {
    const base = `http://127.0.0.1:${server.httpPort}`;
    assert.equal((await fetch(`${base}/v2/health/live`)).status, 200);
    assert.equal((await fetch(`${base}/v2/health/ready`)).status, 200);
    assert.equal((await fetch(`${base}/v2/models/${MODEL}/ready`)).status, 200);
    assert.equal((await fetch(`${base}/v2/models/no-such-model/ready`)).status, 400);
    const unknown = await fetch(`${base}/v2/models/no-such-model`);
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { error: string }).error, /unknown model/);
    const meta = (await (await fetch(`${base}/v2/models/${MODEL}`)).json()) as { name: string; inputs: Array<{ shape: number[] }> };
    assert.equal(meta.name, MODEL);
    assert.deepEqual(meta.inputs[0].shape, [-1, 512, 512, 3]);
    const stats = (await (await fetch(`${base}/v2/models/${MODEL}/stats`)).json()) as { model_stats: Array<{ name: string; inference_count: number; batch_stats: Array<{ batch_size: number }> }> };
    assert.equal(stats.model_stats[0].name, MODEL);
    assert.equal(stats.model_stats[0].inference_count, server.statistics(MODEL)[0].inference_count);
    assert.ok(stats.model_stats[0].batch_stats.some((b) => b.batch_size > 1));
    const grpcStats = await client.modelStatistics(MODEL, '');
    assert.equal(grpcStats.model_stats[0].inference_count, stats.model_stats[0].inference_count);
    assert.equal((await fetch(`${base}/v2/health/live`, { method: 'PUT' })).status, 405);
    assert.equal((await fetch(`${base}/v2/health/live`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${base}/v2/models/%E0%A4%A`)).status, 400);
    assert.equal((await fetch(`${base}/v2/nothing-here`)).status, 404);
  });

  test('graceful shutdown: not ready at once, the call in flight still gets its answer, then the port is closed', async () => {
    let settled = false;
    const inFlight = client.modelInfer(inferRequest(basketball)).finally(() => (settled = true));
    await eventually(() => server.inFlight() > 0 || settled, { what: 'the call held by the server (or answered)', intervalMs: 2 });
    assert.equal(server.inFlight(), 1, 'the request is on the server when the shutdown starts');
    const closing = server.close({ graceMs: 20_000 });
    const answer = await inFlight;
    assert.deepEqual(answer.outputs[0].shape.map(Number), [1, 100, 6]);
    await closing;
    assert.equal((await fetch(`http://127.0.0.1:${server.httpPort}/v2/health/live`).catch(() => undefined))?.status, undefined);
    await rejectsWith(client.serverLive({ deadline: Date.now() + 1_000 }), 'UNAVAILABLE', /./);
  });
});
