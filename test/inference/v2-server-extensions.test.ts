/**
 * The v2 server's Triton extensions and the RPCs beyond what the API uses, driven over
 * real gRPC and HTTP on loopback with the real model (no Python needed; the tritonclient
 * conformance run in test/triton/ compares the same calls with real Triton):
 * ServerMetadata, ModelStreamInfer, the repository index / unload / load cycle, a batch of
 * nine real images (INVALID_ARGUMENT, not the transport's RESOURCE_EXHAUSTED), HTTP
 * inference with the binary tensor extension and with JSON.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { prepareImage } from '../../src/inference/preprocess.js';
import { inferenceService } from '../../src/inference/triton/proto.js';
import type { ModelInferRequest, ModelInferResponse } from '../../src/inference/triton/messages.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';

const MODEL = 'centernet';
type Raw = grpc.Client & Record<string, (req: unknown, cb: (err: grpc.ServiceError | null, res: any) => void) => void>;

function call<T>(client: Raw, method: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => client[method](request, (err, res) => (err ? reject(err) : resolve(res as T))));
}

async function rejectsStatus(p: Promise<unknown>, code: grpc.status, details: string): Promise<void> {
  await assert.rejects(p, (err: grpc.ServiceError) => {
    assert.equal(err.code, code, `${grpc.status[err.code]}: ${err.details}`);
    assert.equal(err.details, details);
    return true;
  });
}

describe('v2 server: Triton extensions and streaming', () => {
  let server: V2Server;
  let client: Raw;
  let image: Buffer;
  let onlyModel: string;

  const request = (rows: number, id = ''): ModelInferRequest => ({
    model_name: MODEL,
    model_version: '',
    id,
    inputs: [{ name: 'images', datatype: 'UINT8', shape: [rows, 512, 512, 3] }],
    outputs: [],
    raw_input_contents: [Buffer.concat(Array.from({ length: rows }, () => image))],
  });

  before(async () => {
    // A repository of CenterNet alone, whatever else model:prepare or model import put beside it.
    onlyModel = await mkdtemp(path.join(os.tmpdir(), 'v2-ext-'));
    await symlink(path.join(REPO_ROOT, 'model-repository', MODEL), path.join(onlyModel, MODEL));
    server = await startV2Server({
      modelRepository: onlyModel,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 2 }),
    });
    const Client = inferenceService();
    client = new Client(server.grpcAddress, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1 }) as unknown as Raw;
    const prepared = await prepareImage(readFixture('basketball1.png'), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
    image = Buffer.from(prepared.tensor.buffer, prepared.tensor.byteOffset, prepared.tensor.byteLength);
  });

  after(async () => {
    client?.close();
    await server?.close({ graceMs: 1_000 });
    await rm(onlyModel, { recursive: true, force: true });
  });

  test('ServerMetadata: name, version and the extensions served', async () => {
    const m = await call<{ name: string; version: string; extensions: string[] }>(client, 'ServerMetadata', {});
    assert.equal(m.name, 'recog-inference-server');
    assert.match(m.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual([...m.extensions].sort(), ['binary_tensor_data', 'model_configuration', 'model_repository', 'statistics']);
  });

  test('a batch of 9 real images (28 MB) is INVALID_ARGUMENT "batch-size must be <= 8", as Triton answers', async () => {
    await rejectsStatus(call(client, 'ModelInfer', request(9)), grpc.status.INVALID_ARGUMENT, "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'centernet'");
  });

  test('ModelStreamInfer: one response per request, a bad one answered with error_message, the stream goes on', async () => {
    const stream = (client as unknown as { ModelStreamInfer(): grpc.ClientDuplexStream<ModelInferRequest, { error_message: string; infer_response: ModelInferResponse | null }> }).ModelStreamInfer();
    const got: Array<{ error_message: string; infer_response: ModelInferResponse | null }> = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on('data', (m) => got.push(m));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write(request(1, 'a'));
    stream.write(request(9, 'too-many'));
    stream.write(request(2, 'b'));
    stream.end();
    await done;
    assert.equal(got.length, 3);
    const ok = got.filter((m) => m.infer_response).map((m) => [m.infer_response!.id, m.infer_response!.outputs[0].shape.map(Number)]);
    assert.deepEqual(ok.sort(), [['a', [1, 100, 6]], ['b', [2, 100, 6]]]);
    assert.deepEqual(got.filter((m) => m.error_message).map((m) => m.error_message), ["[request id: too-many] inference request batch-size must be <= 8 for 'centernet'"]);
  });

  test('repository: index READY; unload → NOT_FOUND "has no available versions", not ready, index UNAVAILABLE; load → serving again', async () => {
    const index = () => call<{ models: Array<{ name: string; state: string; version: string }> }>(client, 'RepositoryIndex', { ready: false });
    assert.deepEqual((await index()).models.map((m) => [m.name, m.version, m.state]), [[MODEL, '1', 'READY']]);
    const expected = await call<ModelInferResponse>(client, 'ModelInfer', request(1));

    await call(client, 'RepositoryModelUnload', { model_name: 'no_such_model' }); // nothing loaded by that name: OK, as on Triton
    await call(client, 'RepositoryModelUnload', { model_name: MODEL });
    await rejectsStatus(call(client, 'ModelInfer', request(1)), grpc.status.NOT_FOUND, "Request for unknown model: 'centernet' has no available versions");
    await rejectsStatus(call(client, 'ModelMetadata', { name: MODEL }), grpc.status.NOT_FOUND, "Request for unknown model: 'centernet' has no available versions");
    await rejectsStatus(call(client, 'ModelStatistics', { name: MODEL }), grpc.status.INVALID_ARGUMENT, "requested model 'centernet' is not available");
    assert.equal((await call<{ ready: boolean }>(client, 'ModelReady', { name: MODEL })).ready, false);
    assert.deepEqual((await index()).models.map((m) => [m.name, m.state]), [[MODEL, 'UNAVAILABLE']]);
    assert.deepEqual((await call<{ models: unknown[] }>(client, 'RepositoryIndex', { ready: true })).models, []);
    const notReady = await fetch(`http://127.0.0.1:${server.httpPort}/v2/models/${MODEL}/ready`);
    assert.equal(notReady.status, 400);
    assert.deepEqual(await notReady.json(), { error: 'Model version not ready' });
    // Strict readiness, as Triton: a model of the server that is not available makes the server not ready.
    assert.equal((await call<{ ready: boolean }>(client, 'ServerReady', {})).ready, false);
    assert.equal((await fetch(`http://127.0.0.1:${server.httpPort}/v2/health/ready`)).status, 400);

    await rejectsStatus(call(client, 'RepositoryModelLoad', { model_name: 'no_such_model' }), grpc.status.INTERNAL, "failed to load 'no_such_model', failed to poll from model repository");
    await call(client, 'RepositoryModelLoad', { model_name: MODEL });
    assert.equal((await call<{ ready: boolean }>(client, 'ModelReady', { name: MODEL })).ready, true);
    assert.equal((await call<{ ready: boolean }>(client, 'ServerReady', {})).ready, true);
    const again = await call<ModelInferResponse>(client, 'ModelInfer', request(1));
    assert.ok(again.raw_output_contents[0].equals(expected.raw_output_contents[0]), 'the reloaded model gives the same bytes');
  });

  test('shared memory, trace and log settings: status answered, registration and changes refused clearly', async () => {
    assert.deepEqual((await call<{ regions: object }>(client, 'SystemSharedMemoryStatus', {})).regions, {});
    await assert.rejects(call(client, 'SystemSharedMemoryRegister', { name: 'r', key: '/r', byte_size: 16 }), (e: grpc.ServiceError) => e.code === grpc.status.UNIMPLEMENTED);
    const log = await call<{ settings: Record<string, unknown> }>(client, 'LogSettings', {});
    assert.deepEqual(Object.keys(log.settings).sort(), ['log_error', 'log_file', 'log_format', 'log_info', 'log_verbose_level', 'log_warning']);
    await assert.rejects(call(client, 'LogSettings', { settings: { log_info: { bool_param: false } } }), (e: grpc.ServiceError) => e.code === grpc.status.UNIMPLEMENTED);
  });

  test('HTTP infer: binary tensor extension and JSON give the model output; errors in Triton words', async () => {
    const base = `http://127.0.0.1:${server.httpPort}`;
    const grpcOut = await call<ModelInferResponse>(client, 'ModelInfer', request(1));
    const header = Buffer.from(JSON.stringify({
      inputs: [{ name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], parameters: { binary_data_size: image.length } }],
      outputs: [{ name: 'detections', parameters: { binary_data: true } }],
    }));
    const res = await fetch(`${base}/v2/models/${MODEL}/infer`, { method: 'POST', headers: { 'inference-header-content-length': String(header.length) }, body: Buffer.concat([header, image]) });
    assert.equal(res.status, 200);
    const jsonLength = Number(res.headers.get('inference-header-content-length'));
    const body = Buffer.from(await res.arrayBuffer());
    const meta = JSON.parse(body.subarray(0, jsonLength).toString()) as { outputs: Array<{ name: string; shape: number[]; parameters: { binary_data_size: number } }> };
    assert.deepEqual(meta.outputs[0].shape, [1, 100, 6]);
    assert.ok(body.subarray(jsonLength).equals(grpcOut.raw_output_contents[0]), 'the same bytes as over gRPC');

    const asJson = await fetch(`${base}/v2/models/${MODEL}/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: Array.from(image) }] }),
    });
    assert.equal(asJson.status, 200);
    const out = (await asJson.json()) as { outputs: Array<{ data: number[] }> };
    assert.deepEqual(out.outputs[0].data, Array.from(new Float32Array(grpcOut.raw_output_contents[0].buffer.slice(grpcOut.raw_output_contents[0].byteOffset, grpcOut.raw_output_contents[0].byteOffset + 2400))));

    const bad = await fetch(`${base}/v2/models/${MODEL}/infer`, { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'pixels', datatype: 'UINT8', shape: [1, 1], data: [0] }] }) });
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: "unexpected inference input 'pixels' for model 'centernet'" });
    const meta2 = (await (await fetch(`${base}/v2`)).json()) as { name: string; extensions: string[] };
    assert.equal(meta2.name, 'recog-inference-server');
    const idx = (await (await fetch(`${base}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as Array<{ name: string; state: string }>;
    assert.deepEqual(idx.map((m) => [m.name, m.state]), [[MODEL, 'READY']]);
  });

  test('two models: unloading one leaves the other ready and serving; the server is not ready until it is back', async () => {
    const repo = await mkdtemp(path.join(os.tmpdir(), 'v2-two-'));
    const source = path.join(REPO_ROOT, 'model-repository', MODEL);
    const config = await readFile(path.join(source, 'config.pbtxt'), 'utf8');
    for (const name of [MODEL, 'other']) {
      await mkdir(path.join(repo, name, '1'), { recursive: true });
      await writeFile(path.join(repo, name, 'config.pbtxt'), config.replace(`name: "${MODEL}"`, `name: "${name}"`));
      await symlink(path.join(source, '1', 'model.onnx'), path.join(repo, name, '1', 'model.onnx'));
    }
    const two = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    const c = new (inferenceService())(two.grpcAddress, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1 }) as unknown as Raw;
    try {
      await call(c, 'RepositoryModelUnload', { model_name: 'other' });
      assert.equal((await call<{ ready: boolean }>(c, 'ModelReady', { name: MODEL })).ready, true);
      assert.equal((await call<{ ready: boolean }>(c, 'ServerReady', {})).ready, false);
      const out = await call<ModelInferResponse>(c, 'ModelInfer', request(1));
      assert.deepEqual(out.outputs[0].shape.map(Number), [1, 100, 6]);
      await call(c, 'RepositoryModelLoad', { model_name: 'other' });
      assert.equal((await call<{ ready: boolean }>(c, 'ServerReady', {})).ready, true);
    } finally {
      c.close();
      await two.close({ graceMs: 1_000 });
      await rm(repo, { recursive: true, force: true });
    }
  });
});
