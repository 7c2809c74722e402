import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { planResize, prepareImage } from '../../src/inference/preprocess.js';
import { readFixture } from '../helpers/fixtures.js';

const INPUT = { width: 512, height: 512 };

describe('planResize', () => {
  test('stretch fills the input and scales each axis on its own', () => {
    const g = planResize({ width: 640, height: 480 }, INPUT, 'stretch');
    assert.deepEqual(g, { width: 640, height: 480, inputWidth: 512, inputHeight: 512, contentWidth: 512, contentHeight: 512, scaleX: 0.8, scaleY: 512 / 480 });
  });

  test('letterbox keeps the aspect ratio, fitting the longer side', () => {
    const g = planResize({ width: 640, height: 480 }, INPUT, 'letterbox');
    assert.deepEqual([g.contentWidth, g.contentHeight, g.scaleX, g.scaleY], [512, 384, 0.8, 0.8]);
    const tall = planResize({ width: 100, height: 400 }, INPUT, 'letterbox');
    assert.deepEqual([tall.contentWidth, tall.contentHeight], [128, 512]);
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

  test('the tensor is RGB in NHWC order (red stays in channel 0)', async () => {
    const red = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const p = await prepareImage(red, INPUT, { maxPixels: 40_000_000, fit: 'stretch' });
    const o = (256 * 512 + 256) * 3;
    assert.deepEqual([p.tensor[o], p.tensor[o + 1], p.tensor[o + 2]], [255, 0, 0]);
  });
});
