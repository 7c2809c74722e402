/**
 * The quality measurement: AP@0.5 arithmetic on hand-made cases, crowd regions ignored,
 * and the real CenterNet on the repository's hand-labelled photos.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { averagePrecision, bootstrap, evaluate, formatIntervals, type CocoSet, type ImageDetections } from '../../tools/model/eval.js';
import type { Detection } from '../../src/recognition/detection.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const det = (label: string, x: number, y: number, w: number, h: number, confidence: number): Detection => ({ label, external_id: label, bounding_box: { x, y, width: w, height: h }, confidence });

const SET: CocoSet = {
  images: [{ id: 1, file_name: 'a.jpg', width: 100, height: 100 }, { id: 2, file_name: 'b.jpg', width: 100, height: 100 }],
  annotations: [
    { id: 1, image_id: 1, category_id: 1, bbox: [0, 0, 50, 50] },
    { id: 2, image_id: 2, category_id: 1, bbox: [10, 10, 40, 40] },
    { id: 3, image_id: 2, category_id: 1, bbox: [60, 0, 40, 100], iscrowd: 1 },
    { id: 4, image_id: 1, category_id: 17, bbox: [50, 50, 50, 50] },
  ],
  categories: [{ id: 1, name: 'person' }, { id: 17, name: 'cat' }, { id: 3, name: 'car' }],
};

describe('AP@0.5 and the serving threshold', () => {
  test('averagePrecision: all hits first is 1, a miss ranked above the hits costs, nothing found is 0', () => {
    assert.equal(averagePrecision([{ score: 0.9, tp: true }, { score: 0.8, tp: true }], 2), 1);
    const ap = averagePrecision([{ score: 0.9, tp: false }, { score: 0.8, tp: true }, { score: 0.7, tp: true }], 2);
    assert.ok(Math.abs(ap - 2 / 3) < 1e-9, `AP ${ap}`); // smoothed precision is 2/3 at every recall
    assert.equal(averagePrecision([], 3), 0);
  });

  test('evaluate: matches at IoU 0.5 once per object, ignores detections in crowd regions, applies the serving threshold', () => {
    const results = [
      { imageId: 1, detections: [det('person', 2, 2, 50, 50, 0.9), det('person', 0, 0, 48, 50, 0.8), det('cat', 50, 50, 50, 50, 0.2), det('car', 0, 0, 10, 10, 0.7)] },
      { imageId: 2, detections: [det('person', 70, 10, 20, 60, 0.95), det('person', 12, 12, 40, 40, 0.6), det('person', 80, 80, 10, 10, 0.4)] },
    ];
    const r = evaluate(SET, results, (label) => (label === 'cat' ? 0.1 : 0.5), 2);
    const person = r.classes.find((c) => c.label === 'person')!;
    // Ranked: 0.9 TP, 0.8 duplicate FP, 0.6 TP, 0.4 FP; the 0.95 box lies in the crowd and is dropped.
    assert.equal(person.objects, 2);
    assert.ok(Math.abs(person.ap - (51 * 1 + 50 * (2 / 3)) / 101) < 1e-9, `person AP ${person.ap}`);
    assert.equal(person.recall, 1);
    assert.equal(person.precision, 2 / 3);
    const cat = r.classes.find((c) => c.label === 'cat')!;
    assert.deepEqual([cat.ap, cat.recall, cat.threshold], [1, 1, 0.1]);
    assert.deepEqual(r.classes.map((c) => c.label), ['person', 'cat'], 'classes without objects in the set are left out of the mean');
    assert.equal(r.map, (person.ap + 1) / 2);
    assert.equal(r.precision, 3 / 5, 'the car detection counts against the pooled precision');
    assert.equal(r.imagesPerSecond, 1);
  });

  /** 20 photos, one person each at the same place; `found` photos get a detection on it. */
  const photos = 20;
  const PEOPLE: CocoSet = {
    images: Array.from({ length: photos }, (_, i) => ({ id: i + 1, file_name: `${i}.jpg`, width: 100, height: 100 })),
    annotations: Array.from({ length: photos }, (_, i) => ({ id: i + 1, image_id: i + 1, category_id: 1, bbox: [10, 10, 50, 50] as [number, number, number, number] })),
    categories: [{ id: 1, name: 'person' }],
  };
  const run = (found: (i: number) => boolean): ImageDetections[] =>
    PEOPLE.images.map((img, i) => ({ imageId: img.id, detections: found(i) ? [det('person', 10, 10, 50, 50, 0.9)] : [] }));
  const half = run((i) => i % 2 === 0);
  const all = run(() => true);
  const allButOne = run((i) => i !== 3);
  const serving = () => 0.5;

  test('bootstrap over photos: seeded, so reproducible; the interval holds the point estimate', () => {
    const a = bootstrap(PEOPLE, [half], [serving], { resamples: 500, seed: 7 });
    assert.deepEqual(bootstrap(PEOPLE, [half], [serving], { resamples: 500, seed: 7 }), a, 'the same seed, the same intervals');
    assert.notDeepEqual(bootstrap(PEOPLE, [half], [serving], { resamples: 500, seed: 8 }), a);
    const { recall } = a.models[0];
    assert.ok(recall.low < 0.5 && recall.high > 0.5, JSON.stringify(recall));
    assert.ok(recall.low > 0.2 && recall.high < 0.8, `20 photos, not so wide: ${JSON.stringify(recall)}`);
    assert.equal(a.difference, undefined, 'one model, no difference');
  });

  test('bootstrap of two models, paired: a difference on half the photos is real, one photo is noise, the same model is exactly 0', () => {
    const real = bootstrap(PEOPLE, [half, all], [serving, serving], { resamples: 500 });
    assert.ok(real.difference!.recall.low > 0, JSON.stringify(real.difference));
    assert.ok(real.difference!.map.low > 0, JSON.stringify(real.difference));
    const noise = bootstrap(PEOPLE, [allButOne, all], [serving, serving], { resamples: 500 });
    assert.ok(noise.difference!.recall.low <= 0 && noise.difference!.recall.high > 0, JSON.stringify(noise.difference));
    const text = formatIntervals(['a', 'b'], noise);
    assert.match(text, /^a: 95% interval over photos \(500 bootstrap resamples\): mAP@0\.5 \[/);
    assert.match(text, /b - a, paired: mAP@0\.5 \[\+?-?0\.\d{3}, \+0\.\d{3}\] \(not told apart from noise\)/);
    assert.match(formatIntervals(['a', 'b'], real), /recall \[\+0\.\d{3}, \+0\.\d{3}\] \(a real difference\)/);
    const same = bootstrap(PEOPLE, [half, half], [serving, serving], { resamples: 100 });
    assert.deepEqual(same.difference, { map: { low: 0, high: 0 }, recall: { low: 0, high: 0 } });
  });

  test('recog model eval on the built-in CenterNet prints every labelled class and a mAP', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'tools', 'model', 'eval-cli.ts'), '--json'], {
      cwd: REPO_ROOT,
      env: { ...process.env, MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'), MODEL_NAME: 'centernet', INFERENCE_THREADS: '2' },
    });
    const r = JSON.parse(stdout) as {
      map: number;
      classes: Array<{ label: string; ap: number }>;
      imagesPerSecond: number;
      cpuMsPerImage: number;
      interval: { resamples: number; map: { low: number; high: number } };
    };
    const set = JSON.parse(readFileSync(path.join(REPO_ROOT, 'datasets', 'labelled-photos', 'annotations.json'), 'utf8')) as { categories: unknown[] };
    assert.equal(r.classes.length, set.categories.length, 'a line per labelled class');
    assert.equal(r.interval.resamples, 1000);
    assert.ok(r.interval.map.low <= r.map && r.map <= r.interval.map.high, `mAP@0.5 ${r.map} inside its interval ${JSON.stringify(r.interval.map)}`);
    // Measured 0.681 for person and 0.485 in all (docs/model.md gives the mAP); a converter or pre-processing regression moves them.
    assert.ok(r.classes.find((c) => c.label === 'person')!.ap > 0.65, 'most labelled people are found, and found first');
    assert.ok(r.map > 0.45 && r.map < 0.65, `mAP@0.5 ${r.map}`);
    assert.ok(r.imagesPerSecond > 0 && r.cpuMsPerImage > 0);
  });
});
