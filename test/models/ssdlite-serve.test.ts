/**
 * The built-in SSDLite (npm run model:prepare -- --model ssdlite) served as MODEL_NAME=ssdlite:
 * the repository entry declares the ssd family, and the embedded backend and the local v2
 * server (the Triton path) find the fixtures' people with identical results.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDetector } from '../../src/inference/create-detector.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { loadCatalog } from '../../src/models/catalog.js';
import { parseTritonConfig } from '../../src/models/triton-config.js';
import type { Detection, ObjectDetector } from '../../src/recognition/detection.js';
import { SSDLITE_SPEC } from '../../tools/model/ssdlite.js';
import { readFixture } from '../helpers/fixtures.js';
import { prepareSsdlite, testConfig } from '../inference/model.js';

const FIXTURES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;

function people(ds: Detection[]): Detection[] {
  return ds.filter((d) => d.label === 'person');
}

describe('SSDLite built in and served', () => {
  let repo: string;
  let server: V2Server | undefined;
  let unavailable: string | undefined;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'recog-ssdlite-'));
    unavailable = await prepareSsdlite(repo);
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

  test('the entry declares the ssd family, COCO ids as class indexes, and its real tensors', async (t) => {
    if (unavailable) return t.skip(unavailable);
    const catalog = await loadCatalog(path.join(repo, 'ssdlite', 'catalog.json'));
    assert.deepEqual(catalog.detector, SSDLITE_SPEC);
    assert.deepEqual(catalog.classes[0], { index: 1, label: 'person', external_id: 'coco:1' });
    assert.equal(catalog.classes.find((c) => c.label === 'dining table')?.index, 67);
    const config = parseTritonConfig(await readFile(path.join(repo, 'ssdlite', 'config.pbtxt'), 'utf8'));
    assert.deepEqual(config.inputs, [{ name: 'images', dataType: 'TYPE_UINT8', dims: [300, 300, 3] }]);
    assert.deepEqual(config.outputs.map((o) => [o.name, o.dims]), [
      ['detection_boxes', [1917, 4]],
      ['detection_scores', [1917]],
      ['detection_classes', [1917]],
      ['num_detections', [1]],
    ]);
    assert.equal(config.maxBatchSize, 8, 'the batch stays dynamic');
  });

  test('embedded backend and v2 server give identical detections, with the people found', { timeout: 300_000 }, async (t) => {
    if (unavailable) return t.skip(unavailable);
    const embedded = await detector({ MODEL_NAME: 'ssdlite' });
    server = await startV2Server({
      modelRepository: repo,
      models: ['ssdlite'],
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: 0,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 2 }),
    });
    const remote = await detector({ MODEL_NAME: 'ssdlite', TRITON_URL: server.grpcAddress });
    const found: Record<string, Detection[]> = {};
    for (const name of FIXTURES) {
      const [a, b] = await Promise.all([embedded.detect(readFixture(name)), remote.detect(readFixture(name))]);
      assert.deepEqual(b.detections, a.detections, `${name}: the same detections both ways`);
      found[name] = a.detections;
    }
    const players = people(found['basketball1.png']);
    assert.ok(players.length >= 2, `both players in basketball1.png: ${JSON.stringify(found['basketball1.png'])}`);
    assert.ok(players.some((p) => p.bounding_box.x < 100) && players.some((p) => p.bounding_box.x > 400), `one on the left, one on the right: ${JSON.stringify(players)}`);
    assert.ok(people(found['camera.png']).length >= 1, `the cameraman: ${JSON.stringify(found['camera.png'])}`);
    assert.ok(!found['squirrel_cls.jpg'].some((d) => d.label === 'person'), `no person in the squirrel photo: ${JSON.stringify(found['squirrel_cls.jpg'])}`);
  });
});
