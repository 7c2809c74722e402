/**
 * YOLO12n (Ultralytics ONNX export, fetched by scripts/yolo12n.sh, never committed) through
 * `recog model import` and the service's Detector: the family is read from the graph, the
 * real photos' people are found, the embedded backend and the local v2 server (the Triton
 * path) give identical detections, a cut-down 3-class model imports with its catalog and
 * serves, and outputs that cannot be interpreted are refused with a reason.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDetector, createDetectorInBackground } from '../../src/inference/create-detector.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { loadCatalog, type Catalog } from '../../src/models/catalog.js';
import { parseTritonConfig, renderTritonConfig } from '../../src/models/triton-config.js';
import type { Detection, ObjectDetector } from '../../src/recognition/detection.js';
import { DEFAULT_TRIAL_IMAGE } from '../../tools/model/import-cli.js';
import { ImportError, importModel, interpret, tritonConfigFor } from '../../tools/model/import.js';
import { inspectOnnx } from '../../tools/model/onnx-inspect.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { sliceYoloClasses } from '../helpers/onnx-edit.js';
import { optionalWeights, yolo12nPath } from '../helpers/weights.js';
import { testConfig } from '../inference/model.js';

const FETCH = 'scripts/yolo12n.sh';
const FIXTURES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;

function people(ds: Detection[]): Detection[] {
  return ds.filter((d) => d.label === 'person');
}

describe('YOLO12n imported and served', () => {
  let weights: string | undefined;
  let repo: string;
  let server: V2Server | undefined;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    weights = optionalWeights(yolo12nPath(), FETCH);
    repo = await mkdtemp(path.join(os.tmpdir(), 'recog-yolo-'));
  });

  after(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
    await server?.close({ graceMs: 500 });
    await rm(repo, { recursive: true, force: true });
  });

  async function detector(env: Record<string, string>): Promise<ObjectDetector> {
    const { detector, backend } = await createDetector(testConfig({ MODEL_REPOSITORY: repo, INFERENCE_THREADS: '2', ...env }));
    closers.push(() => backend.close());
    return detector;
  }

  test('import reads the family, input and labels from the graph and writes a Triton entry for its real tensors', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    const result = await importModel({ file: weights, repository: repo, name: 'yolo12n', trialImage: DEFAULT_TRIAL_IMAGE, threads: 2 });
    assert.equal(result.spec.family, 'yolo');
    // The export takes NCHW floats scaled by 1/255; served, the graph does both on UINT8 NHWC pixels.
    assert.deepEqual(result.spec.input, { name: 'images', layout: 'NHWC', width: 640, height: 640, fit: 'letterbox', align: 'centre', scale: 1, pad: 114 });
    assert.equal(result.classes, 80);
    assert.match(result.license ?? '', /AGPL/);
    assert.ok(people(result.trial).length >= 1, `the trial run on the astronaut photo finds her: ${JSON.stringify(result.trial)}`);
    const config = parseTritonConfig(await readFile(path.join(repo, 'yolo12n', 'config.pbtxt'), 'utf8'));
    assert.equal(config.maxBatchSize, 0, 'the export has a fixed batch of 1');
    assert.deepEqual(config.inputs, [{ name: 'images', dataType: 'TYPE_UINT8', dims: [1, 640, 640, 3] }]);
    assert.deepEqual(config.outputs, [{ name: 'output0', dataType: 'TYPE_FP32', dims: [1, 84, 8400] }]);
    const catalog = await loadCatalog(path.join(repo, 'yolo12n', 'catalog.json'));
    assert.deepEqual(catalog.classes[0], { index: 0, label: 'person', external_id: 'coco:1' });
    assert.deepEqual(catalog.classes[60], { index: 60, label: 'dining table', external_id: 'coco:67' });
  });

  test('embedded backend and v2 server (the Triton path) give identical detections, with the people found', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    const embedded = await detector({ MODEL_NAME: 'yolo12n' });
    server = await startV2Server({
      modelRepository: repo,
      models: ['yolo12n'],
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 2 }),
    });
    const remote = await detector({ MODEL_NAME: 'yolo12n', TRITON_URL: server.grpcAddress });
    const found: Record<string, Detection[]> = {};
    for (const name of FIXTURES) {
      const [a, b] = await Promise.all([embedded.detect(readFixture(name)), remote.detect(readFixture(name))]);
      assert.deepEqual(b.detections, a.detections, `${name}: the same detections both ways`);
      found[name] = a.detections;
    }
    const players = people(found['basketball1.png']);
    assert.ok(players.length >= 2, `both players in basketball1.png: ${JSON.stringify(found['basketball1.png'])}`);
    assert.ok(players.some((p) => p.bounding_box.x < 100) && players.some((p) => p.bounding_box.x > 400), 'one on the left, one on the right');
    assert.ok(people(found['camera.png']).length >= 1, `the cameraman: ${JSON.stringify(found['camera.png'])}`);
    assert.ok(!found['squirrel_cls.jpg'].some((d) => d.label === 'person'), 'no person in the squirrel photo');
  });

  test('the imported model takes UINT8 pixels and finds what the export itself, served with FP32 NCHW input scaled by the client, finds', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    // The export as a user would bring it: the file unchanged, the catalog declaring NCHW and 1/255.
    const original = await readFile(weights);
    const info = inspectOnnx(original);
    await mkdir(path.join(repo, 'yolo12n-fp32', '1'), { recursive: true });
    await writeFile(path.join(repo, 'yolo12n-fp32', '1', 'model.onnx'), original);
    await writeFile(path.join(repo, 'yolo12n-fp32', 'config.pbtxt'), renderTritonConfig(tritonConfigFor('yolo12n-fp32', info)));
    const imported = JSON.parse(await readFile(path.join(repo, 'yolo12n', 'catalog.json'), 'utf8')) as Catalog;
    const spec = interpret(info, undefined, weights).spec;
    assert.deepEqual([spec.input.layout, spec.input.scale], ['NCHW', 1 / 255]);
    await writeFile(path.join(repo, 'yolo12n-fp32', 'catalog.json'), JSON.stringify({ ...imported, model: { name: 'yolo12n-fp32', version: '1' }, detector: spec }));
    const u8 = await detector({ MODEL_NAME: 'yolo12n' });
    const f32 = await detector({ MODEL_NAME: 'yolo12n-fp32' });
    for (const name of FIXTURES) {
      const [a, b] = [(await u8.detect(readFixture(name))).detections, (await f32.detect(readFixture(name))).detections];
      assert.deepEqual(a.map((d) => d.label), b.map((d) => d.label), `${name}: the same labels`);
      a.forEach((d, i) => {
        assert.ok(Math.abs(d.confidence - b[i].confidence) <= 0.01, `${name} #${i}: ${d.confidence} vs ${b[i].confidence}`);
        for (const k of ['x', 'y', 'width', 'height'] as const) assert.ok(Math.abs(d.bounding_box[k] - b[i].bounding_box[k]) <= 1, `${name} #${i} ${k}: ${d.bounding_box[k]} vs ${b[i].bounding_box[k]}`);
      });
    }
    // The tests below serve the whole repository: leave it as they expect it.
    await rm(path.join(repo, 'yolo12n-fp32'), { recursive: true, force: true });
  });

  test('a YOLO model with 3 classes imports with its catalog (per-class thresholds) and serves', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    const small = path.join(repo, '..', `${path.basename(repo)}-3cls.onnx`);
    await writeFile(small, sliceYoloClasses(await readFile(weights), 3));
    const catalogFile = path.join(repo, '..', `${path.basename(repo)}-catalog.json`);
    closers.push(() => rm(small, { force: true }), () => rm(catalogFile, { force: true }));
    await writeFile(catalogFile, JSON.stringify({ classes: [
      { index: 0, label: 'shopper', external_id: 'sku-100', threshold: 0.5 },
      { index: 1, label: 'bike', external_id: 'sku-200' },
      { index: 2, label: 'car', external_id: 'sku-300', threshold: 0.9 },
    ] }));
    // Without labels the import says what it needs.
    await assert.rejects(importModel({ file: small, repository: repo, name: 'shop', trialImage: DEFAULT_TRIAL_IMAGE }), (err: unknown) => err instanceof ImportError && /no class names.*--labels/.test(err.message));
    await assert.rejects(importModel({ file: small, repository: repo, name: 'shop', labels: 'coco80', trialImage: DEFAULT_TRIAL_IMAGE }), /3 classes, not 80/);
    const result = await importModel({ file: small, repository: repo, name: 'shop', catalog: catalogFile, trialImage: DEFAULT_TRIAL_IMAGE, threads: 2 });
    assert.equal(result.classes, 3);
    const config = parseTritonConfig(await readFile(path.join(repo, 'shop', 'config.pbtxt'), 'utf8'));
    assert.deepEqual(config.outputs, [{ name: 'predictions', dataType: 'TYPE_FP32', dims: [1, 7, 8400] }]);
    const shop = await detector({ MODEL_NAME: 'shop', SCORE_THRESHOLD: '0.3' });
    const { detections } = await shop.detect(readFixture('basketball1.png'));
    const shoppers = detections.filter((d) => d.label === 'shopper');
    assert.ok(shoppers.length >= 2, `the players as shoppers: ${JSON.stringify(detections)}`);
    assert.ok(detections.every((d) => ['shopper', 'bike', 'car'].includes(d.label)));
    assert.ok(shoppers.every((d) => d.confidence >= 0.5 && d.external_id === 'sku-100'), 'the class\'s own threshold 0.5 applies, not SCORE_THRESHOLD');
  });

  test('a catalog with classes the served model cannot output is refused: embedded start fails, the Triton path stays unready, both saying why', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    // The "shop" model imported above (3 classes) given a catalog with yolo12n's 80.
    const wrong = path.join(repo, '..', `${path.basename(repo)}-wrong-catalog.json`);
    closers.push(() => rm(wrong, { force: true }));
    const read = async (name: string) => JSON.parse(await readFile(path.join(repo, name, 'catalog.json'), 'utf8')) as { classes: unknown[] };
    await writeFile(wrong, JSON.stringify({ ...(await read('shop')), classes: (await read('yolo12n')).classes }));
    const why = /catalog of model "shop" does not fit the served model "shop": it maps 80 classes \(index 3, .*and 76 more beyond the model's 3\)/;
    await assert.rejects(detector({ MODEL_NAME: 'shop', MODEL_CATALOG: wrong }), why);

    const v2 = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      models: ['shop'],
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    closers.push(() => v2.close({ graceMs: 0 }));
    const { backend } = await createDetectorInBackground(testConfig({ MODEL_REPOSITORY: repo, MODEL_NAME: 'shop', MODEL_CATALOG: wrong, TRITON_URL: v2.grpcAddress }));
    closers.push(() => backend.close());
    await eventually(() => backend.lastError !== undefined && why.test(backend.lastError), { what: `the backend's last error matching ${why}` });
    assert.equal(await backend.ready(), false);
  });

  test('one v2 server serves several models at once; each API names its own by MODEL_NAME', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    // The repository now holds yolo12n and the 3-class shop model (previous tests).
    const shared = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    closers.push(() => shared.close({ graceMs: 500 }));
    const [coco, shop] = await Promise.all([
      detector({ MODEL_NAME: 'yolo12n', TRITON_URL: shared.grpcAddress }),
      detector({ MODEL_NAME: 'shop', TRITON_URL: shared.grpcAddress, SCORE_THRESHOLD: '0.3' }),
    ]);
    const image = readFixture('basketball1.png');
    const [a, b] = await Promise.all([coco.detect(image), shop.detect(image)]);
    assert.equal(a.model.name, 'yolo12n');
    assert.equal(b.model.name, 'shop');
    assert.ok(people(a.detections).length >= 2, JSON.stringify(a.detections));
    assert.ok(b.detections.length >= 1 && b.detections.every((d) => ['shopper', 'bike', 'car'].includes(d.label)), JSON.stringify(b.detections));
    // Each equals that model run embedded.
    const alone = await detector({ MODEL_NAME: 'shop', SCORE_THRESHOLD: '0.3' });
    assert.deepEqual(b.detections, (await alone.detect(image)).detections);
  });

  test('outputs it cannot interpret are refused with the reason, and nothing is written', async (t) => {
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run ${FETCH}`);
    const centernet = path.join(REPO_ROOT, 'model-repository', 'centernet', '1', 'model.onnx');
    await assert.rejects(
      importModel({ file: centernet, repository: repo, name: 'bad', family: 'yolo', trialImage: DEFAULT_TRIAL_IMAGE }),
      (err: unknown) => err instanceof ImportError && /cannot interpret this model's outputs/.test(err.message) && /anchors first/.test(err.message),
    );
    const notOnnx = path.join(repo, '..', `${path.basename(repo)}-notes.onnx`);
    closers.push(() => rm(notOnnx, { force: true }));
    await writeFile(notOnnx, 'these are not weights');
    await assert.rejects(importModel({ file: notOnnx, repository: repo, name: 'bad', trialImage: DEFAULT_TRIAL_IMAGE }), /not an ONNX model|cannot interpret/);
    assert.equal(await stat(path.join(repo, 'bad')).then(() => true, () => false), false);
  });
});
