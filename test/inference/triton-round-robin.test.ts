/**
 * Client-side load balancing over several Triton pods: the operator points the API at a
 * headless Service (dns:///…), which resolves to every pod; the client must spread calls
 * over all of them. Here two local v2 servers stand for two pods, named by one
 * multi-address target.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { TritonBackend } from '../../src/inference/triton/triton-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const servers: V2Server[] = [];
let backend: TritonBackend;

before(async () => {
  for (const host of ['127.0.0.1', '127.0.0.2']) {
    servers.push(
      await startV2Server({
        modelRepository: MODEL_REPOSITORY,
        host,
        grpcPort: 0,
        httpPort: 0,
        createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
      }),
    );
  }
  const url = `ipv4:127.0.0.1:${servers[0].grpcPort},127.0.0.2:${servers[1].grpcPort}`;
  backend = new TritonBackend({ url, modelName: 'centernet' });
  await backend.start();
});

after(async () => {
  await backend?.close();
  await Promise.all(servers.map((s) => s.close()));
});

test('calls are spread over every address the target resolves to', async () => {
  const input = new Uint8Array(512 * 512 * 3).fill(127);
  for (let i = 0; i < 6; i++) {
    await backend.infer([{ name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: input }]);
  }
  const counts = servers.map((s) => Number(s.statistics('centernet')[0]?.inference_count ?? 0));
  assert.ok(counts[0] >= 2 && counts[1] >= 2, `both servers must serve calls, got ${counts.join(' and ')}`);
});
