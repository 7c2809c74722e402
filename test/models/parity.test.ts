/**
 * Proof of a faithful conversion: the original TF.js graph (tfjs CPU backend) and the
 * converted ONNX model (ONNX Runtime) see the same real photo and must agree on the top
 * detections: scores within 1e-3, boxes within 0.5 px. Also: a batch of 2 gives exactly
 * the results of two runs of 1 (the batch dimension is dynamic).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.js';
import { CENTERNET, centernetSourceFiles } from '../../tools/model/centernet.js';
import { prepareModel } from '../../tools/model/prepare.js';
import { fixturePath } from '../helpers/fixtures.js';
import { loadTfjsModel, runTfjs } from './tfjs-runner.js';

const SIZE = CENTERNET.inputSize;
const TOP = 20;

/** The pixels as bytes: the served model takes UINT8 and casts them itself; TF.js gets them as floats. */
async function modelInput(file: string): Promise<Uint8Array> {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').resize(SIZE, SIZE, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  assert.equal(info.channels, 3);
  return Uint8Array.from(data);
}

interface Det {
  box: number[];
  score: number;
  cls: number;
}

function detections(data: ArrayLike<number>, offset = 0, count = 100): Det[] {
  const out: Det[] = [];
  for (let i = 0; i < count; i++) {
    const o = offset + i * 6;
    out.push({ box: [data[o], data[o + 1], data[o + 2], data[o + 3]], score: data[o + 4], cls: data[o + 5] });
  }
  return out;
}

describe('CenterNet ONNX conversion', () => {
  let session: ort.InferenceSession;
  let image: Uint8Array;
  let camera: Uint8Array;

  before(async () => {
    const config = loadConfig();
    const prepared = await prepareModel({ repository: config.modelRepository, modelName: config.modelName, cacheDir: null });
    session = await ort.InferenceSession.create(prepared.modelPath, { intraOpNumThreads: 1 });
    image = await modelInput(fixturePath('basketball1.png'));
    camera = await modelInput(fixturePath('camera.png'));
  });

  test('has the clean names and shapes of the contract', () => {
    assert.deepEqual(session.inputNames, [CENTERNET.input]);
    assert.deepEqual(session.outputNames, [CENTERNET.output]);
  });

  test('matches the original TF.js graph on a real photo (scores 1e-3, boxes 0.5 px)', { timeout: 300_000 }, async (t) => {
    const tfModel = await loadTfjsModel(centernetSourceFiles().json);
    const [ref] = await runTfjs(tfModel, CENTERNET.tfInput, { data: Float32Array.from(image), shape: [1, SIZE, SIZE, 3] }, [CENTERNET.tfOutput]);
    assert.deepEqual(ref.shape, [1, 100, 6]);
    const out = await session.run({ [CENTERNET.input]: new ort.Tensor('uint8', image, [1, SIZE, SIZE, 3]) });
    assert.deepEqual(out[CENTERNET.output].dims, [1, 100, 6]);

    const want = detections(ref.data);
    const got = detections(out[CENTERNET.output].data as Float32Array);
    assert.ok(want[0].score > 0.5 && want[0].cls === 0, 'the reference finds a person first');
    let maxScore = 0;
    let maxBox = 0;
    for (const w of want.slice(0, TOP)) {
      // Match by class and nearest box, so near-equal scores swapping places do not matter.
      const candidates = got.filter((g) => g.cls === w.cls);
      assert.ok(candidates.length > 0, `class ${w.cls} missing from the ONNX output`);
      const g = candidates.reduce((best, c) => (boxDistance(c.box, w.box) < boxDistance(best.box, w.box) ? c : best));
      maxScore = Math.max(maxScore, Math.abs(g.score - w.score));
      maxBox = Math.max(maxBox, boxDistance(g.box, w.box));
    }
    t.diagnostic(`parity over the top ${TOP}: max |Δscore| = ${maxScore.toExponential(2)}, max |Δbox| = ${maxBox.toExponential(2)} px`);
    assert.ok(maxScore <= 1e-3, `score difference ${maxScore}`);
    assert.ok(maxBox <= 0.5, `box difference ${maxBox} px`);
    // Same order too for the clearly separated leaders.
    assert.equal(got[0].cls, want[0].cls);
  });

  test('a batch of 2 equals two runs of 1 (dynamic batch)', async () => {
    const one = async (x: Uint8Array) => (await session.run({ [CENTERNET.input]: new ort.Tensor('uint8', x, [1, SIZE, SIZE, 3]) }))[CENTERNET.output].data as Float32Array;
    const a = await one(image);
    const b = await one(camera);
    const both = new Uint8Array(image.length * 2);
    both.set(image);
    both.set(camera, image.length);
    const out = (await session.run({ [CENTERNET.input]: new ort.Tensor('uint8', both, [2, SIZE, SIZE, 3]) }))[CENTERNET.output];
    assert.deepEqual(out.dims, [2, 100, 6]);
    const data = out.data as Float32Array;
    assert.ok(maxAbsDiff(data.subarray(0, 600), a) <= 1e-4, 'sample 0 differs');
    assert.ok(maxAbsDiff(data.subarray(600), b) <= 1e-4, 'sample 1 differs');
    assert.notDeepEqual(Array.from(a.subarray(0, 6)), Array.from(b.subarray(0, 6)), 'two different photos give different detections');
  });
});

function boxDistance(a: number[], b: number[]): number {
  return Math.max(...a.map((v, i) => Math.abs(v - b[i])));
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
