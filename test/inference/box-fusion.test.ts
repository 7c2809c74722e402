/** Weighted box fusion (src/inference/box-fusion.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fuseBoxes } from '../../src/inference/box-fusion.js';
import type { Detection } from '../../src/recognition/detection.js';

const det = (label: string, x: number, y: number, width: number, height: number, confidence: number, external_id = `id:${label}`): Detection => ({
  label,
  external_id,
  bounding_box: { x, y, width, height },
  confidence,
});

test('a box every view agrees on keeps its mean score; its corners are the score-weighted mean', () => {
  const fused = fuseBoxes(
    [
      { detections: [det('person', 100, 100, 50, 100, 0.9)], weight: 1 },
      { detections: [det('person', 110, 100, 50, 100, 0.3)], weight: 1 },
    ],
    0.55,
  );
  assert.equal(fused.length, 1);
  assert.equal(fused[0].confidence, 0.6);
  // x1 = (100·0.9 + 110·0.3) / 1.2 = 102.5 → 103 (rounded); the width follows from x2 = 152.5 → 153.
  assert.deepEqual(fused[0].bounding_box, { x: 103, y: 100, width: 50, height: 100 });
});

test('a box only one view found is discounted by the views that missed it', () => {
  const fused = fuseBoxes(
    [
      { detections: [det('cat', 0, 0, 40, 40, 0.8)], weight: 1 },
      { detections: [], weight: 1 },
      { detections: [], weight: 2 },
    ],
    0.55,
  );
  assert.equal(fused.length, 1);
  assert.equal(fused[0].confidence, 0.2, '0.8 × 1 / (1 + 1 + 2)');
});

test('labels never fuse, boxes overlapping too little stay apart, and the result is most confident first', () => {
  const fused = fuseBoxes(
    [
      { detections: [det('car', 0, 0, 100, 100, 0.5), det('truck', 0, 0, 100, 100, 0.7), det('car', 60, 0, 100, 100, 0.9)], weight: 1 },
      { detections: [det('car', 2, 0, 100, 100, 0.5)], weight: 1 },
    ],
    0.55,
  );
  assert.deepEqual(
    fused.map((d) => [d.label, d.bounding_box.x, d.confidence]),
    [
      ['car', 1, 0.5],
      ['car', 60, 0.45],
      ['truck', 0, 0.35],
    ],
  );
});

test('two boxes of one view in a cluster still count that view once', () => {
  const fused = fuseBoxes([{ detections: [det('dog', 0, 0, 100, 100, 0.6), det('dog', 5, 0, 100, 100, 0.4)], weight: 1 }, { detections: [], weight: 1 }], 0.55);
  assert.equal(fused.length, 1);
  assert.equal(fused[0].confidence, 0.5, 'mean 0.5 × min(2, 2) / 2, not more than every view');
});

test("the cluster's best box names the product id", () => {
  const fused = fuseBoxes([{ detections: [det('cup', 0, 0, 10, 10, 0.3, 'weak')], weight: 1 }, { detections: [det('cup', 0, 0, 10, 10, 0.9, 'strong')], weight: 1 }], 0.55);
  assert.equal(fused[0].external_id, 'strong');
});
