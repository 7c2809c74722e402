/**
 * The families' decoding arithmetic on hand-made output tensors: where a box lands in the
 * original photo (stretch and letterbox), per-class thresholds, classes outside the
 * catalog, and the pre-processing each family declares (layout, scale, padding).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tensor } from '../../src/inference/backend.js';
import { checkServedModel, decodeOutputs, toModelInput } from '../../src/inference/families.js';
import { planResize } from '../../src/inference/preprocess.js';
import type { DetectorSpec } from '../../src/models/detector-spec.js';

const YOLO: DetectorSpec = { family: 'yolo', input: { name: 'images', layout: 'NCHW', width: 4, height: 4, fit: 'letterbox', align: 'centre', scale: 1 / 255, pad: 114 }, outputs: { predictions: 'out' } };
const SSD: DetectorSpec = { family: 'ssd', input: { name: 'x', layout: 'NHWC', width: 300, height: 300, fit: 'stretch', align: 'corner', scale: 1, pad: 0 }, outputs: { boxes: 'b', scores: 's', classes: 'c', count: 'n' } };
const f32 = (name: string, shape: number[], values: number[]): Tensor => ({ name, datatype: 'FP32', shape, data: Float32Array.from(values) });

describe('detector families', () => {
  test('yolo: [1, 4+C, A] → best class per anchor, letterboxed boxes mapped back, per-class thresholds', () => {
    // 2 classes, 3 anchors; the photo is 800×400, letterboxed into 640×640 (content 640×320).
    const spec = { ...YOLO, input: { ...YOLO.input, width: 640, height: 640 } };
    const g = planResize({ width: 800, height: 400 }, { width: 640, height: 640 }, 'letterbox');
    const out = f32('out', [1, 6, 3], [
      100, 300, 600, // cx
      100, 100, 300, // cy
      40, 40, 80, // w
      20, 20, 40, // h
      0.9, 0.2, 0.95, // class 0 scores
      0.1, 0.6, 0.1, // class 1 scores
    ]);
    const got = decodeOutputs(spec, new Map([['out', out]]), g, (c) => (c === 0 ? 0.5 : c === 1 ? 0.7 : undefined));
    // Anchor 0: class 0 at 0.9 → (80..120, 90..110) ÷ 0.8. Anchor 1: class 1 at 0.6 < its 0.7. Anchor 2 (y 280..320) touches the content's bottom edge → 350..400.
    assert.equal(got.length, 2);
    assert.deepEqual({ ...got[0] }, { x1: 100, y1: 112.5, x2: 150, y2: 137.5, score: Math.fround(0.9), classIndex: 0 });
    assert.deepEqual([got[1].classIndex, got[1].y1, got[1].y2], [0, 350, 400]);
  });

  test('yolo: a box on a centred letterbox maps back by its offset, and the padding on both sides is filled', () => {
    // 200×100 into 4×4: content 4×2 from row 1; the model sees the box (1..3, 1.5..2.5).
    const g = planResize({ width: 200, height: 100 }, { width: 4, height: 4 }, 'letterbox', 'centre');
    assert.deepEqual([g.offsetX, g.offsetY, g.scaleX], [0, 1, 0.02]);
    const out = f32('out', [1, 5, 1], [2, 2, 2, 1, 0.9]);
    const [c] = decodeOutputs(YOLO, new Map([['out', out]]), g, () => 0.5);
    assert.deepEqual([c.x1, c.y1, c.x2, c.y2], [50, 25, 150, 75], 'the box sits in the middle of the original, not 50 px lower');

    const raster = new Float32Array(4 * 4 * 3);
    for (let i = 4 * 3; i < 3 * 4 * 3; i++) raster[i] = 255; // content rows 1 and 2
    const data = toModelInput(raster, g, YOLO).data as Float32Array;
    const red = Array.from({ length: 4 }, (_, y) => Math.round(data[y * 4] * 255));
    assert.deepEqual(red, [114, 255, 255, 114]);
  });

  test('yolo: a class the catalog leaves out is dropped even when it wins', () => {
    const g = planResize({ width: 4, height: 4 }, { width: 4, height: 4 }, 'letterbox');
    const out = f32('out', [1, 6, 1], [2, 2, 2, 2, 0.1, 0.9]);
    assert.deepEqual(decodeOutputs(YOLO, new Map([['out', out]]), g, (c) => (c === 0 ? 0.05 : undefined)), []);
  });

  test('ssd: normalised ymin, xmin, ymax, xmax; only the first num_detections rows; label-map ids kept', () => {
    const g = planResize({ width: 600, height: 300 }, { width: 300, height: 300 }, 'stretch');
    const outputs = new Map([
      ['b', f32('b', [1, 3, 4], [0.1, 0.2, 0.5, 0.6, 0, 0, 1, 1, 0, 0, 1, 1])],
      ['s', f32('s', [1, 3], [0.8, 0.4, 0.99])],
      ['c', f32('c', [1, 3], [18, 1, 1])],
      ['n', f32('n', [1], [2])],
    ]);
    const got = decodeOutputs(SSD, outputs, g, () => 0.3);
    assert.deepEqual(got.map((c) => [c.classIndex, ...[c.x1, c.y1, c.x2, c.y2].map((v) => Math.round(v * 1e3) / 1e3)]), [[18, 120, 30, 360, 150], [1, 0, 0, 600, 300]]);
  });

  test('toModelInput: NCHW planes scaled, the letterbox padding filled with the declared value', () => {
    const g = planResize({ width: 4, height: 2 }, { width: 4, height: 4 }, 'letterbox');
    const raster = new Float32Array(4 * 4 * 3);
    for (let i = 0; i < 4 * 2 * 3; i++) raster[i] = 255; // the content: two white rows
    const t = toModelInput(raster, g, YOLO);
    assert.deepEqual(t.shape, [1, 3, 4, 4]);
    const data = t.data as Float32Array;
    assert.equal(data[0], 1); // R of the first pixel, 255 / 255
    assert.ok(Math.abs(data[16 * 2 + 15] - 114 / 255) < 1e-6, 'B of the last pixel is padding');
  });

  test('checkServedModel names what the catalog expects and what the server has', () => {
    assert.throws(() => checkServedModel(YOLO, [{ name: 'images', datatype: 'FP32', shape: [1, 512, 512, 3] }], [{ name: 'out', datatype: 'FP32', shape: [1, 84, 8400] }]), /expected an FP32 input images \[-1,3,4,4\]/);
    assert.throws(() => checkServedModel(YOLO, [{ name: 'images', datatype: 'FP32', shape: [1, 3, 4, 4] }], [{ name: 'output0', datatype: 'FP32', shape: [1, 84, 8400] }]), /no output out \(the yolo predictions\)/);
    checkServedModel(YOLO, [{ name: 'images', datatype: 'FP32', shape: [-1, 3, 4, 4] }], [{ name: 'out', datatype: 'FP32', shape: [-1, 84, 8400] }]);
  });

  test('checkServedModel: an FP32 or a UINT8 input is served, and says which; other datatypes are refused naming both', () => {
    const outs = [{ name: 'out', datatype: 'FP32' as const, shape: [-1, 84, 8400] }];
    const pixels = { ...YOLO, input: { ...YOLO.input, layout: 'NHWC' as const, scale: 1 } };
    assert.equal(checkServedModel(YOLO, [{ name: 'images', datatype: 'FP32', shape: [-1, 3, 4, 4] }], outs), 'FP32');
    assert.equal(checkServedModel(pixels, [{ name: 'images', datatype: 'UINT8', shape: [-1, 4, 4, 3] }], outs), 'UINT8');
    for (const datatype of ['INT64', 'FP16'] as const) {
      assert.throws(
        () => checkServedModel(pixels, [{ name: 'images', datatype, shape: [-1, 4, 4, 3] }], outs),
        new RegExp(`the served model's input images is ${datatype}; the service sends image pixels as FP32 .* or UINT8`),
      );
    }
    // Bytes cannot carry pixels scaled by 1/255: such a model must scale in its graph.
    assert.throws(() => checkServedModel({ ...YOLO, input: { ...YOLO.input, layout: 'NHWC' } }, [{ name: 'images', datatype: 'UINT8', shape: [-1, 4, 4, 3] }], outs), /input images is UINT8, but its catalog scales pixels by 0\.0039/);
  });

  test('toModelInput on bytes (a UINT8 model): the raster itself, padding filled; no scaling', () => {
    const pixels = { ...YOLO, input: { ...YOLO.input, layout: 'NHWC' as const, scale: 1 } };
    const g = planResize({ width: 4, height: 2 }, { width: 4, height: 4 }, 'letterbox', 'centre');
    const raster = new Uint8Array(4 * 4 * 3);
    raster.fill(200, 4 * 3, 3 * 4 * 3); // content rows 1 and 2
    const t = toModelInput(raster, g, pixels);
    assert.equal(t.datatype, 'UINT8');
    assert.deepEqual(t.shape, [1, 4, 4, 3]);
    assert.equal(t.data, raster, 'no copy: the decoder\'s bytes are the tensor');
    assert.deepEqual(Array.from({ length: 4 }, (_, y) => raster[y * 12]), [114, 200, 200, 114]);
    // A UINT8 model that wants planes gets them (bytes moved, not converted).
    const nchw = toModelInput(raster, g, { ...pixels, input: { ...pixels.input, layout: 'NCHW' } });
    assert.deepEqual([nchw.datatype, ...nchw.shape], ['UINT8', 1, 3, 4, 4]);
    assert.deepEqual(Array.from(nchw.data.subarray(0, 16) as Uint8Array), [114, 114, 114, 114, 200, 200, 200, 200, 200, 200, 200, 200, 114, 114, 114, 114]);
  });
});
