/**
 * The API with Triton that is not up yet: the app builds and answers at once (/healthz 200),
 * /readyz is 503 naming the inference backend, a recognition is refused cleanly; when the
 * (local, real) Triton-protocol server comes up on that address, the API becomes ready and
 * recognises without a restart.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server } from '../../src/inference/v2-server/server.js';
import { buildTestApp, json } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/local-server.js';

test('the API listens before Triton is up; readiness waits for the model, then it serves', async () => {
  const port = await freePort();
  const t = await buildTestApp({ TRITON_URL: `127.0.0.1:${port}` });
  let server: Awaited<ReturnType<typeof startV2Server>> | undefined;
  try {
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const unready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(unready.statusCode, 503);
    assert.match(json<{ checks: Record<string, string> }>(unready).checks.inference, /^model not ready/);
    assert.equal(json<{ checks: Record<string, string> }>(unready).checks.database, 'ok');

    const key = await t.newKey();
    const early = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': key.key },
      payload: { external_id: 'early', image_base64: readFixture('camera.png').toString('base64') },
    });
    assert.equal(early.statusCode, 200, early.body);
    assert.equal(json<{ status: string }>(early).status, 'ERROR');

    const repo = path.join(REPO_ROOT, 'model-repository');
    server = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: port,
      httpPort: null,
      models: ['centernet'],
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    await eventually(async () => (await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, { what: 'the API ready once Triton serves the model', timeoutMs: 60_000 });

    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': key.key },
      payload: { external_id: 'later', image_base64: readFixture('camera.png').toString('base64') },
    });
    assert.equal(json<{ status: string }>(res).status, 'DONE', res.body);
  } finally {
    await t.close();
    await server?.close({ graceMs: 0 });
  }
});

test('a catalog that belongs to another model keeps the API unready, saying so', async () => {
  const repo = path.join(REPO_ROOT, 'model-repository');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-catalog-'));
  const catalog = JSON.parse(await readFile(path.join(repo, 'centernet', 'catalog.json'), 'utf8'));
  catalog.model.name = 'yolo-retail';
  await writeFile(path.join(dir, 'catalog.json'), JSON.stringify(catalog));
  const server = await startV2Server({
    modelRepository: repo,
    host: '127.0.0.1',
    grpcPort: 0,
    httpPort: null,
    models: ['centernet'],
    createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
  });
  const t = await buildTestApp({ TRITON_URL: server.grpcAddress, MODEL_CATALOG: path.join(dir, 'catalog.json') });
  try {
    await eventually(async () => {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.match(json<{ checks: Record<string, string> }>(res).checks.inference, /is for model "yolo-retail" but the backend serves "centernet"/);
      return true;
    }, { what: '/readyz naming the catalog of another model' });
  } finally {
    await t.close();
    await server.close({ graceMs: 0 });
    await rm(dir, { recursive: true, force: true });
  }
});
