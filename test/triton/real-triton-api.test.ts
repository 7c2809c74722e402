/**
 * The API against REAL Triton: tritonserver 2.51 from nvidia-pytriton, serving the
 * prepared model through its python backend (ONNX Runtime inside the bound function,
 * Triton's dynamic batcher, the same tensor names and max_batch_size), reached with
 * TRITON_URL exactly as in production. Asserts the same detections as the embedded backend
 * on every fixture, /readyz while Triton is up, down (degraded) and back (same ports, no API
 * restart), and the result while the model is unloaded: Triton answers NOT_FOUND
 * "has no available versions", the API records ERROR 503 and /readyz names inference as
 * degraded (every replica shares Triton: failing readiness would take them all out of rotation).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { readFixture } from '../helpers/fixtures.js';
import { pythonEnv, runPythonJson, startRealTriton, type RealTriton } from '../helpers/python-env.js';

const MODEL = 'centernet';
const FIXTURES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;
const env = pythonEnv();

interface SyncBody {
  success: boolean;
  status: string;
  error?: string;
  response_code: number;
  results: Array<{ label: string; external_id: string; bounding_box: Record<string, number>; confidence: number }>;
}

function sync(t: TestApp, key: TestKey, image: Buffer, externalId: string) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: externalId, image_base64: image.toString('base64') },
  });
}

describe('API with TRITON_URL → real Triton (PyTriton, python backend, ONNX Runtime)', { skip: 'skip' in env ? env.skip : false }, () => {
  const python = 'python' in env ? env.python : '';
  let triton: RealTriton;
  let api: TestApp;
  let embedded: TestApp;
  let key: TestKey;
  let embeddedKey: TestKey;
  let n = 0;

  /** The tritonclient call the repository extension takes (PyTriton opened it for the test). */
  const repository = (action: 'unload_model' | 'get_model_repository_index') =>
    runPythonJson<unknown>(python, [
      '-c',
      `import json, tritonclient.grpc as g; c = g.InferenceServerClient("${triton.grpcAddress}"); r = c.${action}("${MODEL}") if "${action}" == "unload_model" else c.${action}(as_json=True); print(json.dumps(r))`,
    ]);

  before(async () => {
    triton = await startRealTriton(python);
    [api, embedded] = await Promise.all([buildTestApp({ TRITON_URL: triton.grpcAddress, TRITON_MODEL_NAME: MODEL }), buildTestApp()]);
    key = await api.newKey();
    embeddedKey = await embedded.newKey();
  });

  after(async () => {
    await api?.close();
    await embedded?.close();
    await triton?.stop();
  });

  test('the API runs on real Triton and is ready', async () => {
    assert.equal(api.services.backend.kind, 'triton');
    // With TRITON_URL the backend starts in the background (the API listens at once), so
    // /readyz turns 200 once it has read the model from Triton: waited for, not read once.
    await eventually(async () => {
      const res = await api.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<{ checks: Record<string, string> }>(res).checks.inference, 'ok');
      return true;
    }, { what: 'the API on real Triton ready' });
  });

  test('every fixture: the same CVResult detections as the embedded backend', async () => {
    let found = 0;
    for (const f of FIXTURES) {
      const image = readFixture(f);
      const a = await sync(api, key, image, `same-${++n}`);
      const b = await sync(embedded, embeddedKey, image, `same-${n}`);
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(b.statusCode, 200, b.body);
      const ra = json<SyncBody>(a);
      assert.equal(ra.status, 'DONE', a.body);
      assert.deepEqual(ra.results, json<SyncBody>(b).results, f);
      found += ra.results.length;
    }
    assert.ok(found >= 3, 'objects were detected: the comparison is not between empty lists');
  });

  test('Triton down: /readyz degraded and ERROR 503; Triton back on the same ports: DONE without restarting the API', async () => {
    const { grpcPort, httpPort } = triton;
    await triton.stop();
    const down = await api.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(down.statusCode, 200, down.body);
    assert.deepEqual(json<{ degraded: string[] }>(down).degraded, ['inference']);
    const failed = json<SyncBody>(await sync(api, key, readFixture('camera.png'), `down-${++n}`));
    assert.equal(failed.status, 'ERROR');
    assert.equal(failed.response_code, 503);
    assert.match(failed.error!, /^inference failed: .*(UNAVAILABLE|no connection to the inference server)/);

    triton = await startRealTriton(python, { grpcPort, httpPort });
    await eventually(async () => json<{ degraded: string[] }>(await api.app.inject({ method: 'GET', url: '/readyz' })).degraded.length === 0, { what: '/readyz no longer degraded' });
    const again = json<SyncBody>(await sync(api, key, readFixture('basketball1.png'), `back-${++n}`));
    assert.equal(again.status, 'DONE');
    assert.ok(again.results.some((d) => d.label === 'person'));
  });

  test('model unloaded on Triton: NOT_FOUND "has no available versions" → ERROR 503, /readyz degraded', async () => {
    await repository('unload_model');
    const res = await sync(api, key, readFixture('camera.png'), `unloaded-${++n}`);
    assert.equal(res.statusCode, 200, res.body);
    const body = json<SyncBody>(res);
    assert.equal(body.success, false);
    assert.equal(body.status, 'ERROR');
    assert.equal(body.response_code, 503);
    assert.match(body.error!, /^inference failed: ModelInfer \(inference server\): NOT_FOUND: Request for unknown model: 'centernet' has no available versions$/);
    const ready = await api.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(json<{ degraded: string[] }>(ready).degraded, ['inference']);
    assert.match(json<{ checks: Record<string, string> }>(ready).checks.inference, /not ready/);
  });
});
