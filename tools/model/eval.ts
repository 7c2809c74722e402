/**
 * `recog model eval`: a detector's quality on a labelled set in COCO JSON. Runs every
 * photo through the service's own Detector at a low floor, then computes per class
 * AP@0.5 (COCO's 101-point interpolation, greedy matching by score, crowd regions
 * ignored), mAP@0.5 over the classes the set labels, and precision/recall at the serving
 * threshold (each class's catalog threshold, else SCORE_THRESHOLD), plus images/s.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ObjectDetector, Detection } from '../../src/recognition/detection.js';

export interface CocoSet {
  images: Array<{ id: number; file_name: string; width: number; height: number }>;
  annotations: Array<{ id: number; image_id: number; category_id: number; bbox: [number, number, number, number]; iscrowd?: number }>;
  categories: Array<{ id: number; name: string }>;
}

export async function loadCocoSet(file: string): Promise<CocoSet> {
  const raw = JSON.parse(await readFile(file, 'utf8')) as Partial<CocoSet>;
  if (!Array.isArray(raw.images) || !Array.isArray(raw.annotations) || !Array.isArray(raw.categories)) {
    throw new Error(`${file}: expected COCO JSON with images, annotations and categories`);
  }
  return raw as CocoSet;
}

export interface ImageDetections {
  imageId: number;
  detections: Detection[];
}

export interface ClassResult {
  label: string;
  objects: number;
  ap: number;
  /** At the serving threshold of this class. */
  recall: number;
  precision: number;
  threshold: number;
}

export interface EvalResult {
  classes: ClassResult[];
  map: number;
  /** All classes pooled, at the serving thresholds. */
  recall: number;
  precision: number;
  images: number;
  imagesPerSecond: number;
}

type Box = { x1: number; y1: number; x2: number; y2: number };

function iou(a: Box, b: Box): number {
  const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  return inter / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter);
}

/** Share of `d` inside `crowd` (COCO's rule for crowd regions: intersection over the detection's area). */
function insideShare(d: Box, crowd: Box): number {
  const iw = Math.min(d.x2, crowd.x2) - Math.max(d.x1, crowd.x1);
  const ih = Math.min(d.y2, crowd.y2) - Math.max(d.y1, crowd.y1);
  return iw <= 0 || ih <= 0 ? 0 : (iw * ih) / ((d.x2 - d.x1) * (d.y2 - d.y1));
}

/** One class: each detection, best first, marked true/false positive (crowd hits dropped). */
function matchClass(set: CocoSet, categoryId: number, label: string, results: ImageDetections[]): { scored: Array<{ score: number; tp: boolean }>; objects: number } {
  const box = (b: [number, number, number, number]): Box => ({ x1: b[0], y1: b[1], x2: b[0] + b[2], y2: b[1] + b[3] });
  const truth = new Map<number, { boxes: Box[]; used: boolean[]; crowds: Box[] }>();
  let objects = 0;
  for (const a of set.annotations) {
    if (a.category_id !== categoryId) continue;
    const t = truth.get(a.image_id) ?? { boxes: [], used: [], crowds: [] };
    if (a.iscrowd) t.crowds.push(box(a.bbox));
    else {
      t.boxes.push(box(a.bbox));
      t.used.push(false);
      objects++;
    }
    truth.set(a.image_id, t);
  }
  const all = results.flatMap((r) => r.detections.filter((d) => d.label === label).map((d) => ({ imageId: r.imageId, d })));
  all.sort((a, b) => b.d.confidence - a.d.confidence);
  const scored: Array<{ score: number; tp: boolean }> = [];
  for (const { imageId, d } of all) {
    const b = { x1: d.bounding_box.x, y1: d.bounding_box.y, x2: d.bounding_box.x + d.bounding_box.width, y2: d.bounding_box.y + d.bounding_box.height };
    const t = truth.get(imageId);
    let best = -1;
    let bestIou = 0.5;
    t?.boxes.forEach((g, i) => {
      const v = iou(b, g);
      if (!t.used[i] && v >= bestIou) {
        best = i;
        bestIou = v;
      }
    });
    if (best >= 0) {
      t!.used[best] = true;
      scored.push({ score: d.confidence, tp: true });
    } else if (t?.crowds.some((c) => insideShare(b, c) >= 0.5)) {
      continue; // inside a region labelled as a crowd: neither right nor wrong
    } else scored.push({ score: d.confidence, tp: false });
  }
  return { scored, objects };
}

/** COCO's AP: precision made monotone, sampled at recall 0, 0.01, …, 1. */
export function averagePrecision(scored: Array<{ score: number; tp: boolean }>, objects: number): number {
  if (objects === 0) return 0;
  const recall: number[] = [];
  const precision: number[] = [];
  let tp = 0;
  scored.forEach((s, i) => {
    if (s.tp) tp++;
    recall.push(tp / objects);
    precision.push(tp / (i + 1));
  });
  for (let i = precision.length - 2; i >= 0; i--) precision[i] = Math.max(precision[i], precision[i + 1]);
  let sum = 0;
  for (let k = 0; k <= 100; k++) {
    const r = k / 100;
    const i = recall.findIndex((v) => v >= r);
    sum += i >= 0 ? precision[i] : 0;
  }
  return sum / 101;
}

export function evaluate(set: CocoSet, results: ImageDetections[], thresholdOf: (label: string) => number, seconds: number): EvalResult {
  const present = new Set(set.annotations.filter((a) => !a.iscrowd).map((a) => a.category_id));
  const classes: ClassResult[] = [];
  let tpAll = 0;
  let detAll = 0;
  let objAll = 0;
  for (const c of set.categories.filter((k) => present.has(k.id))) {
    const { scored, objects } = matchClass(set, c.id, c.name, results);
    const threshold = thresholdOf(c.name);
    const kept = scored.filter((s) => s.score >= threshold);
    const tp = kept.filter((s) => s.tp).length;
    classes.push({ label: c.name, objects, ap: averagePrecision(scored, objects), recall: tp / objects, precision: kept.length ? tp / kept.length : 1, threshold });
    tpAll += tp;
    detAll += kept.length;
    objAll += objects;
  }
  // Detections of classes the set never labels are false positives of the pooled precision.
  const labelled = new Set(set.categories.filter((k) => present.has(k.id)).map((k) => k.name));
  for (const r of results) detAll += r.detections.filter((d) => !labelled.has(d.label) && d.confidence >= thresholdOf(d.label)).length;
  return {
    classes,
    map: classes.length ? classes.reduce((s, c) => s + c.ap, 0) / classes.length : 0,
    recall: objAll ? tpAll / objAll : 0,
    precision: detAll ? tpAll / detAll : 1,
    images: results.length,
    imagesPerSecond: results.length / seconds,
  };
}

/**
 * Runs the detector over the set's photos, one at a time. `cpuMs` is this process's CPU time
 * over the run, every thread (the embedded model's included).
 */
export async function detectSet(detector: ObjectDetector, set: CocoSet, imagesDir: string): Promise<{ results: ImageDetections[]; seconds: number; cpuMs: number }> {
  const photos = await Promise.all(set.images.map(async (i) => ({ id: i.id, bytes: await readFile(path.join(imagesDir, i.file_name)) })));
  await detector.detect(photos[0].bytes); // warm caches outside the timing
  const started = performance.now();
  const cpu = process.cpuUsage();
  const results: ImageDetections[] = [];
  for (const p of photos) results.push({ imageId: p.id, detections: (await detector.detect(p.bytes)).detections });
  const used = process.cpuUsage(cpu);
  return { results, seconds: (performance.now() - started) / 1000, cpuMs: (used.user + used.system) / 1000 };
}

export function formatEval(model: string, r: EvalResult): string {
  const rows = r.classes.map((c) => `${c.label.padEnd(14)} ${String(c.objects).padStart(7)} ${c.ap.toFixed(3).padStart(8)} ${c.threshold.toFixed(2).padStart(9)} ${c.recall.toFixed(3).padStart(7)} ${c.precision.toFixed(3).padStart(9)}`);
  return [
    `model ${model}: ${r.images} images, ${r.classes.reduce((s, c) => s + c.objects, 0)} objects, ${r.classes.length} classes`,
    `${'CLASS'.padEnd(14)} ${'OBJECTS'.padStart(7)} ${'AP@0.5'.padStart(8)} ${'THRESHOLD'.padStart(9)} ${'RECALL'.padStart(7)} ${'PRECISION'.padStart(9)}`,
    ...rows,
    `mAP@0.5 ${r.map.toFixed(3)}   recall ${r.recall.toFixed(3)}   precision ${r.precision.toFixed(3)} (at the serving thresholds)   ${r.imagesPerSecond.toFixed(2)} images/s`,
  ].join('\n');
}

/** A 95% interval: the 2.5th and 97.5th percentiles of the resampled values. */
export interface Interval {
  low: number;
  high: number;
}

export interface MetricIntervals {
  map: Interval;
  recall: Interval;
}

export interface BootstrapResult {
  resamples: number;
  /** One per model evaluated, in order. */
  models: MetricIntervals[];
  /** With two models: the second's metric minus the first's, on the same resamples (paired). */
  difference?: MetricIntervals;
}

/** mulberry32: a small seeded generator, so that a run's intervals can be reproduced exactly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Each photo's annotations, and each run's detections by photo: built once for every resample. */
interface Lookups {
  annotations: Map<number, CocoSet['annotations']>;
  detections: Array<Map<number, ImageDetections['detections']>>;
}

function lookups(set: CocoSet, runs: ImageDetections[][]): Lookups {
  const annotations = new Map<number, CocoSet['annotations']>();
  for (const a of set.annotations) {
    const list = annotations.get(a.image_id);
    if (list) list.push(a);
    else annotations.set(a.image_id, [a]);
  }
  return { annotations, detections: runs.map((run) => new Map(run.map((r) => [r.imageId, r.detections]))) };
}

/** The set as if its photos were `draw` (indexes into set.images, repeats allowed), with each run's detections to match. */
function resampled(set: CocoSet, of: Lookups, draw: number[]): { set: CocoSet; runs: ImageDetections[][] } {
  const images: CocoSet['images'] = [];
  const annotations: CocoSet['annotations'] = [];
  draw.forEach((index, k) => {
    const photo = set.images[index];
    images.push({ ...photo, id: k + 1 });
    for (const a of of.annotations.get(photo.id) ?? []) annotations.push({ ...a, id: annotations.length + 1, image_id: k + 1 });
  });
  return {
    set: { images, annotations, categories: set.categories },
    runs: of.detections.map((byPhoto) => draw.map((index, k) => ({ imageId: k + 1, detections: byPhoto.get(set.images[index].id) ?? [] }))),
  };
}

function percentiles(values: number[]): Interval {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
  return { low: at(0.025), high: at(0.975) };
}

/**
 * Bootstrap over photos (the unit the set was sampled by, so objects of one photo move
 * together): `resamples` times, as many photos drawn with replacement as the set has, every
 * model evaluated on the same draw. With two models the interval of their difference is paired,
 * far narrower than the two intervals side by side suggest: it is what tells a real difference
 * from the luck of which photos were labelled.
 */
export function bootstrap(
  set: CocoSet,
  runs: ImageDetections[][],
  thresholds: Array<(label: string) => number>,
  { resamples = 1000, seed = 1 }: { resamples?: number; seed?: number } = {},
): BootstrapResult {
  const next = seeded(seed);
  const of = lookups(set, runs);
  const values = runs.map(() => ({ map: [] as number[], recall: [] as number[] }));
  const difference = { map: [] as number[], recall: [] as number[] };
  for (let i = 0; i < resamples; i++) {
    const draw = set.images.map(() => Math.floor(next() * set.images.length));
    const sample = resampled(set, of, draw);
    const scores = sample.runs.map((run, m) => evaluate(sample.set, run, thresholds[m], 1));
    scores.forEach((s, m) => {
      values[m].map.push(s.map);
      values[m].recall.push(s.recall);
    });
    if (scores.length === 2) {
      difference.map.push(scores[1].map - scores[0].map);
      difference.recall.push(scores[1].recall - scores[0].recall);
    }
  }
  const intervals = (v: { map: number[]; recall: number[] }): MetricIntervals => ({ map: percentiles(v.map), recall: percentiles(v.recall) });
  return { resamples, models: values.map(intervals), ...(runs.length === 2 ? { difference: intervals(difference) } : {}) };
}

const range = (i: Interval, signed = false) => {
  const f = (n: number) => `${signed && n >= 0 ? '+' : ''}${n.toFixed(3)}`;
  return `[${f(i.low)}, ${f(i.high)}]`;
};

/** The interval lines under formatEval's table; with two models, their difference and whether it is more than noise. */
export function formatIntervals(models: string[], b: BootstrapResult): string {
  const lines = models.map((m, i) => `${m}: 95% interval over photos (${b.resamples} bootstrap resamples): mAP@0.5 ${range(b.models[i].map)}   recall ${range(b.models[i].recall)}`);
  if (b.difference) {
    const verdict = (i: Interval) => (i.low > 0 || i.high < 0 ? 'a real difference' : 'not told apart from noise');
    lines.push(
      `${models[1]} - ${models[0]}, paired: mAP@0.5 ${range(b.difference.map, true)} (${verdict(b.difference.map)})   recall ${range(b.difference.recall, true)} (${verdict(b.difference.recall)})`,
    );
  }
  return lines.join('\n');
}
