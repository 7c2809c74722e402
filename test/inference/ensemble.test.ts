/**
 * DETECTION_PROFILE=accurate: CenterNet and SSDLite fused (src/inference/ensemble-detector.ts),
 * embedded and through a v2 server (the Triton path), with the real models on real photos;
 * and the settings that choose it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createDetector, createDetectorInBackground, ensembleConfigs } from '../../src/inference/create-detector.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import type { Detection, ObjectDetector } from '../../src/recognition/detection.js';
import { eventually } from '../helpers/eventually.js';
import { readFixture, REPO_ROOT } from '../helpers/fixtures.js';
import { prepareSsdlite, testConfig } from './model.js';

const ACCURATE = { DETECTION_PROFILE: 'accurate', INFERENCE_THREADS: '2' };

const people = (ds: Detection[]) => ds.filter((d) => d.label === 'person');

describe('the accurate profile', () => {
  let dir: string;
  let repo: string;
  let server: V2Server | undefined;
  let unavailable: string | undefined;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recog-ensemble-'));
    repo = path.join(dir, 'repository');
    unavailable = await prepareSsdlite(repo);
    await symlink(path.join(REPO_ROOT, 'model-repository', 'centernet'), path.join(repo, 'centernet'));
  });

  after(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
    await server?.close({ graceMs: 500 });
    await rm(dir, { recursive: true, force: true });
  });

  async function detector(env: Record<string, string>, floor?: number): Promise<ObjectDetector> {
    const { detector, backend } = await createDetector(testConfig({ MODEL_REPOSITORY: repo, ...env }), undefined, { floor });
    closers.push(() => backend.close());
    return detector;
  }

  test('names both models, finds both players, and answers at its own default threshold', { timeout: 300_000 }, async (t) => {
    if (unavailable) return t.skip(unavailable);
    const accurate = await detector(ACCURATE);
    assert.deepEqual(accurate.model, { name: 'centernet+ssdlite', version: '1+1' });
    assert.equal(accurate.labels()[0], 'person', "CenterNet's catalog names the classes");
    const outcome = await accurate.detect(readFixture('basketball1.png'));
    assert.deepEqual(outcome.model, accurate.model);
    const players = people(outcome.detections);
    assert.ok(players.length >= 2, JSON.stringify(outcome.detections));
    assert.ok(players.some((p) => p.bounding_box.x < 100) && players.some((p) => p.bounding_box.x > 400), `one on the left, one on the right: ${JSON.stringify(players)}`);
    for (const d of outcome.detections) {
      assert.ok(d.confidence >= 0.2 && d.confidence <= 1, `at or above the accurate default of 0.2: ${JSON.stringify(d)}`);
      assert.match(d.external_id, /^coco:\d+$/, "the product id of CenterNet's catalog");
    }
    assert.ok(outcome.timings.inferMs > 0 && outcome.timings.decodeMs > 0);
    const squirrel = await accurate.detect(readFixture('squirrel_cls.jpg'));
    assert.ok(!squirrel.detections.some((d) => d.label === 'person'), `no person in the squirrel photo: ${JSON.stringify(squirrel.detections)}`);
  });

  test("the first model's catalog thresholds apply to the fused confidence; a floor sets them aside", { timeout: 300_000 }, async (t) => {
    if (unavailable) return t.skip(unavailable);
    const catalog = JSON.parse(await readFile(path.join(repo, 'centernet', 'catalog.json'), 'utf8')) as { classes: Array<{ label: string; threshold?: number }> };
    for (const c of catalog.classes) if (c.label === 'person') c.threshold = 0.99;
    const strict = path.join(dir, 'strict-catalog.json');
    await writeFile(strict, JSON.stringify(catalog));
    const image = readFixture('basketball1.png');
    const narrowed = await detector({ ...ACCURATE, MODEL_CATALOG: strict });
    assert.deepEqual(people((await narrowed.detect(image)).detections), [], 'no fused person reaches 0.99');
    const floored = await detector({ ...ACCURATE, MODEL_CATALOG: strict }, 0.05);
    const all = (await floored.detect(image)).detections;
    assert.ok(people(all).length >= 2, `the floor answers the people anyway: ${JSON.stringify(all)}`);
    assert.ok(all.some((d) => d.confidence < 0.2), 'and boxes under the serving threshold');
  });

  test('through a v2 server (the Triton path) it answers exactly as embedded', { timeout: 300_000 }, async (t) => {
    if (unavailable) return t.skip(unavailable);
    server = await startV2Server({
      modelRepository: repo,
      models: ['centernet', 'ssdlite'],
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    const embedded = await detector(ACCURATE);
    const config = testConfig({ MODEL_REPOSITORY: repo, ...ACCURATE, TRITON_URL: server.grpcAddress, TRITON_MODEL_NAME: 'centernet' });
    const { detector: remote, backend } = await createDetectorInBackground(config);
    closers.push(() => backend.close());
    await eventually(() => backend.ready(), { what: 'both models served through the v2 server', timeoutMs: 120_000 });
    assert.equal(remote.model.name, 'centernet+ssdlite');
    for (const name of ['basketball1.png', 'camera.png'] as const) {
      const [a, b] = await Promise.all([embedded.detect(readFixture(name)), remote.detect(readFixture(name))]);
      assert.deepEqual(b.detections, a.detections, `${name}: the same fused detections both ways`);
    }
  });

  test('a model of the ensemble missing from the repository stops the start, naming it', { timeout: 300_000 }, async () => {
    await assert.rejects(detector({ ...ACCURATE, ENSEMBLE_MODELS: 'nosuchmodel' }), (err: Error) => {
      assert.match(err.message, /nosuchmodel/);
      return true;
    });
  });
});

describe('settings of the accurate profile', () => {
  test('fast by default; accurate fuses MODEL_NAME with ENSEMBLE_MODELS (SSDLite by default) at 0.2', () => {
    const fast = loadConfig({});
    assert.equal(fast.detectionProfile, 'fast');
    assert.equal(fast.scoreThreshold, 0.3);
    const accurate = loadConfig({ DETECTION_PROFILE: 'accurate' });
    assert.deepEqual(accurate.ensembleModels, ['ssdlite']);
    assert.equal(accurate.scoreThreshold, 0.2);
    assert.equal(loadConfig({ DETECTION_PROFILE: 'accurate', SCORE_THRESHOLD: '0.35' }).scoreThreshold, 0.35, 'an explicit threshold wins');
    assert.deepEqual(loadConfig({ DETECTION_PROFILE: 'accurate', MODEL_NAME: 'yolo12n', ENSEMBLE_MODELS: ' centernet , ssdlite ' }).ensembleModels, ['centernet', 'ssdlite']);
    assert.equal(loadConfig({ MODEL_NAME: 'ssdlite' }).modelName, 'ssdlite', 'the fast profile ignores ENSEMBLE_MODELS');
  });

  test('each model of the ensemble: its own name and catalog, the newest version on Triton', () => {
    const config = loadConfig({ DETECTION_PROFILE: 'accurate', MODEL_REPOSITORY: '/models', INFERENCE_THREADS: '8', ENSEMBLE_MODELS: 'ssdlite,yolox', TRITON_MODEL_VERSION: '3' });
    const members = ensembleConfigs(config);
    assert.deepEqual(members.map((m) => [m.modelName, m.tritonModelName, m.tritonModelVersion, m.inferenceThreads]), [
      ['centernet', 'centernet', '3', 8],
      ['ssdlite', 'ssdlite', '', 8],
      ['yolox', 'yolox', '', 8],
    ]);
    assert.equal(members[1].modelCatalog, path.join('/models', 'ssdlite', 'catalog.json'));
    assert.equal(members[0].modelCatalog, config.modelCatalog, "the first model keeps MODEL_CATALOG's");
  });

  const refused = (env: Record<string, string>, message: string) =>
    assert.throws(() => loadConfig(env), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.ok(err.message.includes(message), err.message);
      return true;
    });

  test('bad profiles and ensembles are refused with the reason', () => {
    refused({ DETECTION_PROFILE: 'best' }, 'DETECTION_PROFILE must be one of fast, accurate (got "best")');
    refused({ DETECTION_PROFILE: 'accurate', ENSEMBLE_MODELS: 'centernet' }, 'ENSEMBLE_MODELS must name models other than MODEL_NAME ("centernet")');
    refused({ DETECTION_PROFILE: 'accurate', ENSEMBLE_MODELS: 'ssdlite,ssdlite' }, 'and each once');
    refused({ DETECTION_PROFILE: 'accurate', ENSEMBLE_MODELS: 'a,b,c,d' }, 'ENSEMBLE_MODELS must be one to three model names');
    refused({ DETECTION_PROFILE: 'accurate', ENSEMBLE_MODELS: '../etc' }, 'ENSEMBLE_MODELS must be one to three model names');
    refused(
      { DETECTION_PROFILE: 'accurate', TRITON_URL: 'triton:8001', TRITON_MODEL_VERSION: '1', CANARY_WEIGHT: '10', CANARY_MODEL_VERSION: '2' },
      'DETECTION_PROFILE=accurate cannot run with a canary',
    );
  });
});
