/**
 * The API on TRITON_URL → the local v2 server (real gRPC on loopback, real model, real
 * database): the same detections as the embedded backend, the request deadline carried to
 * the server (408 path), /readyz following the inference server, an ERROR result while
 * it is down and recovery once it is back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';

const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const MODEL = 'centernet';
const FIXTURES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;

function startServer(grpcPort: number, extra: { maxQueueDelayUs?: number; modelRepository?: string } = {}): Promise<V2Server> {
  return startV2Server({
    modelRepository: MODEL_REPOSITORY,
    host: '127.0.0.1',
    grpcPort,
    httpPort: null,
    // One thread like the test app's embedded backend (INFERENCE_THREADS=1), same arithmetic.
    createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    ...extra,
  });
}

function sync(t: TestApp, key: TestKey, image: Buffer, externalId: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: externalId, image_base64: image.toString('base64') },
  });
}

describe('API with TRITON_URL → local v2 server', () => {
  let server: V2Server;
  let grpcApi: TestApp;
  let embeddedApi: TestApp;
  let grpcKey: TestKey;
  let embeddedKey: TestKey;
  let n = 0;

  before(async () => {
    server = await startServer(0);
    [grpcApi, embeddedApi] = await Promise.all([buildTestApp({ TRITON_URL: server.grpcAddress, TRITON_MODEL_NAME: MODEL }), buildTestApp()]);
    grpcKey = await grpcApi.newKey();
    embeddedKey = await embeddedApi.newKey();
  });

  after(async () => {
    await grpcApi?.close();
    await embeddedApi?.close();
    await server?.close({ graceMs: 1_000 });
  });

  test('the API runs on the Triton backend and is ready', async () => {
    assert.equal(grpcApi.services.backend.kind, 'triton');
    // With TRITON_URL the backend starts in the background (the API listens at once), so
    // /readyz turns 200 once it has read the model from the server: waited for, not read once.
    await eventually(async () => {
      const res = await grpcApi.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<{ checks: Record<string, string> }>(res).checks.inference, 'ok');
      return true;
    }, { what: 'the API on Triton ready' });
  });

  test('sync on every fixture: the same CVResult detections as the embedded backend', async () => {
    const before = server.statistics(MODEL)[0].inference_count;
    let people = 0;
    for (const f of FIXTURES) {
      const image = readFixture(f);
      const [a, b] = [await sync(grpcApi, grpcKey, image, `same-${++n}`), await sync(embeddedApi, embeddedKey, image, `same-${n}`)];
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(b.statusCode, 200, b.body);
      const ga = json<{ status: string; results: Array<{ label: string }> }>(a);
      const gb = json<{ status: string; results: Array<{ label: string }> }>(b);
      assert.equal(ga.status, 'DONE');
      assert.deepEqual(ga.results, gb.results, f);
      people += ga.results.filter((d) => d.label === 'person').length;
    }
    assert.ok(people >= 2, 'people were detected: the comparison is not between two empty lists');
    assert.equal(server.statistics(MODEL)[0].inference_count - before, FIXTURES.length, 'the inferences ran on the v2 server');
  });

  test('deadline: the request budget reaches the server as the gRPC deadline → 408, record ERROR, the model never ran', async () => {
    // A server whose batches wait up to 60 s to fill: the only request sits in its queue.
    const slow = await startServer(0, { maxQueueDelayUs: 60_000_000 });
    const api = await buildTestApp({ TRITON_URL: slow.grpcAddress, SYNC_TIMEOUT_MS: '2000' });
    try {
      const k = await api.newKey();
      const res = await sync(api, k, readFixture('camera.png'), 'deadline-1');
      assert.equal(res.statusCode, 408, res.body);
      assert.equal(json(res).error_code, 'PROCESSING_TIMEOUT');
      const row = await api.db('requests').where({ key_id: k.id, external_id: 'deadline-1' }).first();
      assert.equal(row.status, 'ERROR');
      assert.equal(row.response_code, 408);
      // The server saw the call end (deadline) and dropped it from its queue without running it.
      await eventually(() => slow.statistics(MODEL)[0].inference_stats.fail.count === 1, { what: 'the call counted as failed on the server' });
      assert.equal(slow.statistics(MODEL)[0].execution_count, 0);
    } finally {
      await api.close();
      await slow.close({ graceMs: 0 });
    }
  });

  test('inference server down: still ready but degraded, sync ends ERROR 503 with the reason; back on the same port: DONE again', async () => {
    const port = server.grpcPort;
    await server.close({ graceMs: 1_000 });

    // Every replica shares the server: out of rotation, clients would get refused connections.
    const degraded = await grpcApi.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(degraded.statusCode, 200, degraded.body);
    assert.deepEqual(json<{ degraded: string[] }>(degraded).degraded, ['inference']);
    assert.match(json<{ checks: Record<string, string> }>(degraded).checks.inference, /model not ready/);

    const down = await sync(grpcApi, grpcKey, readFixture('basketball1.png'), `down-${++n}`);
    assert.equal(down.statusCode, 200, down.body);
    const failed = json<{ success: boolean; status: string; error: string; response_code: number }>(down);
    assert.equal(failed.success, false);
    assert.equal(failed.status, 'ERROR');
    assert.equal(failed.response_code, 503);
    assert.match(failed.error, /^inference failed: .*(UNAVAILABLE|no connection to the inference server)/);
    assert.doesNotMatch(failed.error, new RegExp(String(port)), 'the server address is not shown to API clients');

    server = await startServer(port);
    await eventually(async () => json<{ degraded: string[] }>(await grpcApi.app.inject({ method: 'GET', url: '/readyz' })).degraded.length === 0, { what: '/readyz no longer degraded, without restarting the API' });
    const again = await sync(grpcApi, grpcKey, readFixture('basketball1.png'), `again-${++n}`);
    assert.equal(again.statusCode, 200, again.body);
    const ok = json<{ status: string; results: Array<{ label: string }> }>(again);
    assert.equal(ok.status, 'DONE');
    assert.ok(ok.results.some((d) => d.label === 'person'));
  });

  test('the server is up but without the model: ModelReady false → /readyz degraded, sync ERROR 503 "model not ready"', async () => {
    // A repository holding the same network under another name: what a Triton restarted
    // with a different model set looks like to the API.
    const repo = await mkdtemp(path.join(os.tmpdir(), 'v2-other-'));
    await mkdir(path.join(repo, 'other', '1'), { recursive: true });
    const config = await readFile(path.join(MODEL_REPOSITORY, MODEL, 'config.pbtxt'), 'utf8');
    await writeFile(path.join(repo, 'other', 'config.pbtxt'), config.replace(`name: "${MODEL}"`, 'name: "other"'));
    await symlink(path.join(MODEL_REPOSITORY, MODEL, '1', 'model.onnx'), path.join(repo, 'other', '1', 'model.onnx'));
    const port = server.grpcPort;
    await server.close({ graceMs: 1_000 });
    const other = await startServer(port, { modelRepository: repo });
    try {
      assert.equal(grpcApi.services.backend.kind, 'triton');
      const degraded = await grpcApi.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(degraded.statusCode, 200, degraded.body);
      assert.deepEqual(json<{ degraded: string[] }>(degraded).degraded, ['inference']);
      assert.match(json<{ checks: Record<string, string> }>(degraded).checks.inference, /not ready/);

      const res = await sync(grpcApi, grpcKey, readFixture('camera.png'), `no-model-${++n}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = json<{ success: boolean; status: string; error: string; response_code: number }>(res);
      assert.equal(body.status, 'ERROR');
      assert.equal(body.response_code, 503);
      assert.match(body.error, /^inference failed: ModelInfer \(inference server\): NOT_FOUND: Request for unknown model: 'centernet'/);
    } finally {
      await other.close({ graceMs: 1_000 });
      server = await startServer(port);
      await rm(repo, { recursive: true, force: true });
    }
  });
});
