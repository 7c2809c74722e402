import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { planResize, prepareImage } from '../../src/inference/preprocess.js';
import { readFixture } from '../helpers/fixtures.js';

const INPUT = { width: 512, height: 512 };

describe('planResize', () => {
  test('stretch fills the input and scales each axis on its own', () => {
    const g = planResize({ width: 640, height: 480 }, INPUT, 'stretch');
    assert.deepEqual(g, { width: 640, height: 480, inputWidth: 512, inputHeight: 512, contentWidth: 512, contentHeight: 512, offsetX: 0, offsetY: 0, scaleX: 0.8, scaleY: 512 / 480 });
  });

  test('letterbox keeps the aspect ratio, fitting the longer side', () => {
    const g = planResize({ width: 640, height: 480 }, INPUT, 'letterbox');
    assert.deepEqual([g.contentWidth, g.contentHeight, g.scaleX, g.scaleY], [512, 384, 0.8, 0.8]);
    const tall = planResize({ width: 100, height: 400 }, INPUT, 'letterbox');
    assert.deepEqual([tall.contentWidth, tall.contentHeight], [128, 512]);
  });

  test('a centred letterbox splits the padding, its odd pixel right or bottom (Ultralytics); corner keeps it at 0, 0', () => {
    const wide = planResize({ width: 640, height: 480 }, INPUT, 'letterbox', 'centre');
    assert.deepEqual([wide.contentWidth, wide.contentHeight, wide.offsetX, wide.offsetY], [512, 384, 0, 64]);
    // 640×426 → 512×341: 171 rows of padding, 85 above and 86 below.
    const odd = planResize({ width: 640, height: 426 }, INPUT, 'letterbox', 'centre');
    assert.deepEqual([odd.contentHeight, odd.offsetY], [341, 85]);
    const tall = planResize({ width: 101, height: 400 }, INPUT, 'letterbox', 'centre');
    assert.deepEqual([tall.contentWidth, tall.offsetX, tall.offsetY], [129, 191, 0]);
    const corner = planResize({ width: 640, height: 480 }, INPUT, 'letterbox', 'corner');
    assert.deepEqual([corner.offsetX, corner.offsetY], [0, 0]);
  });

  test('letterbox never plans an empty content area, even for a 1×5000 sliver', () => {
    const g = planResize({ width: 1, height: 5000 }, INPUT, 'letterbox');
    assert.deepEqual([g.contentWidth, g.contentHeight], [1, 512]);
  });
});

describe('prepareImage', () => {
  test('the fixture becomes one 512×512×3 float tensor with its original size kept', async () => {
    const p = await prepareImage(readFixture('basketball1.png'), INPUT, { maxPixels: 40_000_000, fit: 'stretch' });
    assert.equal(p.format, 'png');
    assert.equal(p.tensor.length, 512 * 512 * 3);
    assert.deepEqual([p.geometry.width, p.geometry.height], [640, 480]);
  });

  test('a centred letterbox puts the image in the middle rows of the raster, black above and below', async () => {
    const red = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const p = await prepareImage(red, { width: 16, height: 16 }, { maxPixels: 40_000_000, fit: 'letterbox', align: 'centre' });
    assert.deepEqual([p.geometry.contentHeight, p.geometry.offsetY], [8, 4]);
    const redAt = (y: number) => p.tensor[(y * 16 + 8) * 3];
    assert.deepEqual(Array.from({ length: 16 }, (_, y) => redAt(y)), [0, 0, 0, 0, ...Array<number>(8).fill(255), 0, 0, 0, 0]);
  });

  test('the tensor is RGB in NHWC order (red stays in channel 0)', async () => {
    const red = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const p = await prepareImage(red, INPUT, { maxPixels: 40_000_000, fit: 'stretch' });
    const o = (256 * 512 + 256) * 3;
    assert.deepEqual([p.tensor[o], p.tensor[o + 1], p.tensor[o + 2]], [255, 0, 0]);
  });
});
