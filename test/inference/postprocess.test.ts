import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRows, iou, nonMaxSuppression, postprocess, toBoundingBox, type Candidate } from '../../src/inference/postprocess.js';
import { planResize } from '../../src/inference/preprocess.js';
import type { CatalogClass } from '../../src/models/catalog.js';

const classes = new Map<number, CatalogClass>([
  [0, { index: 0, label: 'person', external_id: 'coco:1' }],
  [2, { index: 2, label: 'car', external_id: 'coco:3' }],
]);

function box(x1: number, y1: number, x2: number, y2: number, score: number, classIndex = 0): Candidate {
  return { x1, y1, x2, y2, score, classIndex };
}

/** Model output rows: [x1, y1, x2, y2, score, class] each. */
function rows(...r: number[][]): Float32Array {
  return new Float32Array(r.flat());
}

describe('iou', () => {
  test('identical boxes overlap fully, disjoint and touching boxes not at all', () => {
    assert.equal(iou(box(0, 0, 10, 10, 1), box(0, 0, 10, 10, 1)), 1);
    assert.equal(iou(box(0, 0, 10, 10, 1), box(20, 20, 30, 30, 1)), 0);
    assert.equal(iou(box(0, 0, 10, 10, 1), box(10, 0, 20, 10, 1)), 0);
  });

  test('half-shifted boxes: intersection 50, union 150', () => {
    assert.equal(iou(box(0, 0, 10, 10, 1), box(5, 0, 15, 10, 1)), 50 / 150);
  });
});

describe('nonMaxSuppression', () => {
  test('drops a same-class duplicate above the IoU threshold, keeps the higher score', () => {
    const kept = nonMaxSuppression([box(1, 1, 11, 11, 0.6), box(0, 0, 10, 10, 0.9)], 0.5);
    assert.deepEqual(kept, [box(0, 0, 10, 10, 0.9)]);
  });

  test('keeps overlapping boxes of different classes (class-aware)', () => {
    const kept = nonMaxSuppression([box(0, 0, 10, 10, 0.9, 0), box(0, 0, 10, 10, 0.8, 2)], 0.5);
    assert.equal(kept.length, 2);
  });

  test('keeps same-class boxes that overlap at or below the threshold', () => {
    // IoU exactly 1/3
    const kept = nonMaxSuppression([box(0, 0, 10, 10, 0.9), box(5, 0, 15, 10, 0.8)], 1 / 3);
    assert.equal(kept.length, 2);
    assert.equal(nonMaxSuppression([box(0, 0, 10, 10, 0.9), box(5, 0, 15, 10, 0.8)], 0.3).length, 1);
  });

  test('a suppressed box does not suppress others (greedy from the best)', () => {
    // B overlaps A and C; A suppresses B; C overlaps only B, so C stays.
    const a = box(0, 0, 10, 10, 0.9);
    const b = box(3, 0, 13, 10, 0.8);
    const c = box(7, 0, 17, 10, 0.7);
    assert.deepEqual(nonMaxSuppression([c, b, a], 0.5), [a, c]);
  });
});

describe('toBoundingBox', () => {
  test('rounds corners to integers and clips to the image', () => {
    assert.deepEqual(toBoundingBox(box(-3.2, 4.4, 50.6, 120.5, 1), 40, 100), { x: 0, y: 4, width: 40, height: 96 });
  });

  test('a box that rounds to nothing is dropped', () => {
    assert.equal(toBoundingBox(box(10.1, 10, 10.3, 20, 1), 100, 100), null);
  });
});

describe('decodeRows and postprocess', () => {
  // A 1024×512 image stretched into a 512×512 input: x is halved, y kept.
  const stretch = planResize({ width: 1024, height: 512 }, { width: 512, height: 512 }, 'stretch');
  // The same image letterboxed: scale 0.5 on both axes, content 512×256, padding below.
  const letterbox = planResize({ width: 1024, height: 512 }, { width: 512, height: 512 }, 'letterbox');

  test('plans the geometry of both fits', () => {
    assert.deepEqual([stretch.scaleX, stretch.scaleY, stretch.contentWidth, stretch.contentHeight], [0.5, 1, 512, 512]);
    assert.deepEqual([letterbox.scaleX, letterbox.scaleY, letterbox.contentWidth, letterbox.contentHeight], [0.5, 0.5, 512, 256]);
  });

  test('maps input pixels back to original pixels (stretch)', () => {
    const [c] = decodeRows(rows([100, 50, 200, 150, 0.9, 0]), 0, 1, { scoreThreshold: 0.3, geometry: stretch, classes });
    assert.deepEqual([c.x1, c.y1, c.x2, c.y2], [200, 50, 400, 150]);
  });

  test('maps input pixels back to original pixels (letterbox) and drops boxes in the padding', () => {
    const out = decodeRows(rows([100, 50, 200, 150, 0.9, 0], [10, 300, 50, 400, 0.9, 0]), 0, 2, { scoreThreshold: 0.3, geometry: letterbox, classes });
    assert.equal(out.length, 1);
    assert.deepEqual([out[0].x1, out[0].y1, out[0].x2, out[0].y2], [200, 100, 400, 300]);
  });

  test('applies the threshold inclusively, drops NaN scores and classes missing from the catalog', () => {
    const out = decodeRows(
      rows([0, 0, 10, 10, 0.3, 0], [0, 0, 10, 10, 0.29, 0], [0, 0, 10, 10, Number.NaN, 0], [0, 0, 10, 10, 0.9, 5]),
      0,
      4,
      { scoreThreshold: 0.3, geometry: stretch, classes },
    );
    assert.equal(out.length, 1);
    assert.equal(out[0].score, Math.fround(0.3));
  });

  test('reads the rows of the requested image in a batch', () => {
    const data = rows([0, 0, 10, 10, 0.9, 0], [0, 0, 10, 10, 0.8, 2]);
    const second = decodeRows(data, 6, 1, { scoreThreshold: 0.3, geometry: stretch, classes });
    assert.equal(second.length, 1);
    assert.equal(second[0].classIndex, 2);
  });

  test('full postprocess: labels, product ids, integer clipped boxes, NMS, most confident first', () => {
    const data = rows(
      [0, 0, 100, 100, 0.5, 2], // car
      [400, 400, 600, 600, 0.95, 0], // person running off the right/bottom edge
      [402, 401, 600, 598, 0.7, 0], // its duplicate
      [10, 10, 20, 20, 0.1, 0], // below threshold
    );
    const out = postprocess(data, 0, 4, { scoreThreshold: 0.3, nmsIou: 0.5, geometry: stretch, classes });
    assert.deepEqual(out, [
      { label: 'person', external_id: 'coco:1', bounding_box: { x: 800, y: 400, width: 224, height: 112 }, confidence: 0.95 },
      { label: 'car', external_id: 'coco:3', bounding_box: { x: 0, y: 0, width: 200, height: 100 }, confidence: 0.5 },
    ]);
  });
});
