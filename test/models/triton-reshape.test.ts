/**
 * A model whose output has only the batch dimension ([N], like a TF OD API export's
 * num_detections): `recog model import`'s Triton config declares it dims [1] with
 * reshape [] (Triton refuses empty dims on a batching model), and the v2 server honours
 * the reshape: the model runs on its own shape, clients see [N, 1], and ModelConfig
 * reports the reshape. Real ONNX Runtime, real gRPC.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { TritonBackend } from '../../src/inference/triton/triton-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { parseTritonConfig, renderTritonConfig } from '../../src/models/triton-config.js';
import { tritonConfigFor } from '../../tools/model/import.js';
import { OnnxGraphBuilder } from '../../tools/model/onnx-builder.js';
import { inspectOnnx } from '../../tools/model/onnx-inspect.js';

/** x [N, 3] → total [N] = the row sums, and x itself as a second output [N, 3]. */
function rowSumModel(): Uint8Array {
  const g = new OnnxGraphBuilder();
  g.addInput('x', 'float32', ['N', 3]);
  const axes = g.int64s('axes', [1]);
  g.node('ReduceSum', ['x', axes], ['total'], { keepdims: 0 });
  g.node('Identity', ['x'], ['copy']);
  g.addOutput('total', 'float32', ['N']);
  g.addOutput('copy', 'float32', ['N', 3]);
  return g.build({ opset: 17, producer: 'recognition-service tests', graphName: 'row_sum' });
}

let dir: string;
let server: V2Server;
let client: TritonBackend;
let configText: string;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'recog-reshape-'));
  const model = rowSumModel();
  configText = renderTritonConfig(tritonConfigFor('rowsum', inspectOnnx(Buffer.from(model))));
  await mkdir(path.join(dir, 'rowsum', '1'), { recursive: true });
  await writeFile(path.join(dir, 'rowsum', '1', 'model.onnx'), model);
  await writeFile(path.join(dir, 'rowsum', 'config.pbtxt'), configText);
  server = await startV2Server({
    modelRepository: dir,
    models: ['rowsum'],
    host: '127.0.0.1',
    grpcPort: 0,
    httpPort: 0,
    createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
  });
  client = new TritonBackend({ url: server.grpcAddress, modelName: 'rowsum' });
  await client.start();
});

after(async () => {
  await client?.close();
  await server?.close({ graceMs: 0 });
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('import declares a [batch] output as dims [1] with reshape []; the text parses back the same', () => {
  assert.match(configText, /name: "total"\n\s+data_type: TYPE_FP32\n\s+dims: \[ 1 \]\n\s+reshape: \{ shape: \[ \] \}/);
  assert.doesNotMatch(configText, /dims: \[ \]/, 'no empty dims anywhere');
  const parsed = parseTritonConfig(configText);
  assert.deepEqual(parsed.outputs.find((o) => o.name === 'total'), { name: 'total', dataType: 'TYPE_FP32', dims: [1], reshape: [] });
  assert.deepEqual(parsed.outputs.find((o) => o.name === 'copy'), { name: 'copy', dataType: 'TYPE_FP32', dims: [3] });
});

test('the v2 server runs the model on its own shape and shows the declared one: [N] becomes [N, 1]', async () => {
  const meta = client.metadata();
  assert.deepEqual(meta.outputs.find((o) => o.name === 'total')?.shape, [-1, 1]);
  const out = await client.infer([{ name: 'x', datatype: 'FP32', shape: [2, 3], data: new Float32Array([1, 2, 3, 10, 20, 30]) }]);
  const total = out.get('total');
  assert.deepEqual(total?.shape, [2, 1]);
  assert.deepEqual(Array.from(total?.data as Float32Array), [6, 60]);
  assert.deepEqual(out.get('copy')?.shape, [2, 3], 'outputs without a reshape keep the model shape');
});

test('ModelConfig reports the reshape as Triton does', async () => {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}/v2/models/rowsum/config`);
  const config = (await res.json()) as { output: Array<{ name: string; dims: Array<number | string>; reshape?: { shape: unknown[] } | null }> };
  const total = config.output.find((o) => o.name === 'total');
  assert.deepEqual(total?.dims.map(Number), [1]);
  assert.deepEqual(total?.reshape?.shape, []);
});
