/**
 * Detection-quality levers (issue 33) on the repository's labelled set, measured the way
 * `recog model eval` measures a model: each built-in model through the service's own
 * detector at a 0.05 floor, on every photo, on its mirror image, and on the corner tiles of
 * the large photos (merged with the whole photo's boxes by NMS, as SAHI does); then every combination
 * fused with the service's weighted box fusion (src/inference/box-fusion.ts) and scored:
 * mAP@0.5 with its 95% interval, the paired interval of the difference from the fast
 * default (CenterNet alone), recall and precision at the serving threshold, and the CPU per
 * photo of the models it runs (this process, every thread, one photo at a time).
 *
 * Last, per-class thresholds: chosen on the even-numbered photos, reported on the odd ones
 * against one threshold chosen on the same even photos, so the figures are not the ones
 * the thresholds were fitted to.
 *
 * BENCH_RESAMPLES (default 1000) sets the bootstrap; the models are prepared if missing.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { fuseBoxes } from '../src/inference/box-fusion.js';
import { createDetector, FUSION_IOU, PROPOSAL_FLOOR as FLOOR } from '../src/inference/create-detector.js';
import type { Detection } from '../src/recognition/detection.js';
import { bootstrap, evaluate, loadCocoSet, type CocoSet, type ImageDetections } from '../tools/model/eval.js';
import { defaultModelCacheDir, prepareModel } from '../tools/model/prepare.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'datasets', 'labelled-photos');
const MODELS = ['centernet', 'ssdlite'] as const;
/** The serving thresholds the settings give a model alone and a fused answer. */
const SINGLE_THRESHOLD = loadConfig({ DETECTION_PROFILE: 'fast' }).scoreThreshold;
const FUSED_THRESHOLD = loadConfig({ DETECTION_PROFILE: 'accurate' }).scoreThreshold;
/** Photos with a long side from this many pixels also run as four corner tiles. */
const TILE_FROM = 1000;
const GRID = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];

interface ViewRun {
  /** Per photo id, the detections in the photo's own pixels. */
  detections: Map<number, Detection[]>;
  cpuMsPerPhoto: number;
}

type ViewKind = 'plain' | 'mirrored' | 'tiles';

/** A photo's crops for the tiled view: its four corners, 60% of each side, when its long side reaches TILE_FROM. */
async function tilesOf(bytes: Uint8Array, width: number, height: number): Promise<Array<{ bytes: Uint8Array; x: number; y: number }>> {
  if (Math.max(width, height) < TILE_FROM) return [];
  const w = Math.round(width * 0.6);
  const h = Math.round(height * 0.6);
  const corners = [[0, 0], [width - w, 0], [0, height - h], [width - w, height - h]];
  return Promise.all(corners.map(async ([x, y]) => ({ bytes: await sharp(bytes).rotate().extract({ left: x, top: y, width: w, height: h }).png().toBuffer(), x, y })));
}

/**
 * One model over the set: the photos as they are, mirrored left to right (boxes mapped back),
 * or the large ones' corner tiles (boxes moved back into the photo; small photos have none).
 */
async function runView(model: string, set: CocoSet, photos: Map<number, Uint8Array>, kind: ViewKind): Promise<ViewRun> {
  const config = { ...loadConfig({ ...process.env, MODEL_NAME: model, DETECTION_PROFILE: 'fast' }), tritonUrl: undefined };
  const { detector, backend } = await createDetector(config, undefined, { floor: FLOOR });
  try {
    const inputs = new Map<number, Array<{ bytes: Uint8Array; x: number; y: number }>>();
    for (const image of set.images) {
      const bytes = photos.get(image.id)!;
      if (kind === 'plain') inputs.set(image.id, [{ bytes, x: 0, y: 0 }]);
      else if (kind === 'mirrored') inputs.set(image.id, [{ bytes: await sharp(bytes).rotate().flop().png().toBuffer(), x: 0, y: 0 }]);
      else inputs.set(image.id, await tilesOf(bytes, image.width, image.height));
    }
    await detector.detect(photos.values().next().value!); // warm-up, outside the measurement
    const detections = new Map<number, Detection[]>();
    const cpu = process.cpuUsage();
    for (const image of set.images) {
      const found: Detection[] = [];
      for (const input of inputs.get(image.id)!) {
        for (const d of (await detector.detect(input.bytes)).detections) {
          const b = d.bounding_box;
          const x = kind === 'mirrored' ? image.width - b.x - b.width : b.x + input.x;
          found.push({ ...d, bounding_box: { ...b, x, y: b.y + input.y } });
        }
      }
      detections.set(image.id, found);
    }
    const used = process.cpuUsage(cpu);
    return { detections, cpuMsPerPhoto: (used.user + used.system) / 1000 / set.images.length };
  } finally {
    await backend.close();
  }
}

/** A model's whole-photo and tile detections as one list: class-aware NMS keeps the best of each overlap (as SAHI merges). */
function withTiles(whole: ViewRun, tiles: ViewRun, nmsIou: number): ViewRun {
  const detections = new Map<number, Detection[]>();
  for (const [id, found] of whole.detections) {
    const kept: Detection[] = [];
    for (const d of [...found, ...tiles.detections.get(id)!].sort((a, b) => b.confidence - a.confidence)) {
      if (!kept.some((k) => k.label === d.label && overlap(k.bounding_box, d.bounding_box) > nmsIou)) kept.push(d);
    }
    detections.set(id, kept);
  }
  return { detections, cpuMsPerPhoto: whole.cpuMsPerPhoto + tiles.cpuMsPerPhoto };
}

function overlap(a: Detection['bounding_box'], b: Detection['bounding_box']): number {
  const iw = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const ih = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (iw <= 0 || ih <= 0) return 0;
  return (iw * ih) / (a.width * a.height + b.width * b.height - iw * ih);
}

interface Variant {
  name: string;
  results: ImageDetections[];
  threshold: number;
  cpuMsPerPhoto: number;
}

function fused(name: string, set: CocoSet, views: Array<{ run: ViewRun; weight: number }>): Variant {
  const results = set.images.map((image) => ({
    imageId: image.id,
    // A fused answer is held to the floor too, as the service's detector at that floor does (recog model eval).
    detections:
      views.length === 1
        ? views[0].run.detections.get(image.id)!
        : fuseBoxes(views.map((v) => ({ detections: v.run.detections.get(image.id)!, weight: v.weight })), FUSION_IOU).filter((d) => d.confidence >= FLOOR),
  }));
  return { name, results, threshold: views.length === 1 ? SINGLE_THRESHOLD : FUSED_THRESHOLD, cpuMsPerPhoto: views.reduce((s, v) => s + v.run.cpuMsPerPhoto, 0) };
}

/** The set restricted to some photos (and their annotations). */
function subset(set: CocoSet, keep: (id: number) => boolean): CocoSet {
  return { ...set, images: set.images.filter((i) => keep(i.id)), annotations: set.annotations.filter((a) => keep(a.image_id)) };
}

/** Per class, the grid threshold with the best F1 on `fit`; classes with under 3 objects there take the global best. */
function perClassThresholds(fit: CocoSet, results: ImageDetections[]): { perClass: Map<string, number>; global: number } {
  const f1 = (r: number, p: number) => (r + p > 0 ? (2 * r * p) / (r + p) : 0);
  const scored = GRID.map((t) => ({ t, e: evaluate(fit, results, () => t, 1) }));
  const global = scored.reduce((best, s) => (f1(s.e.recall, s.e.precision) > f1(best.e.recall, best.e.precision) ? s : best)).t;
  const perClass = new Map<string, number>();
  for (const c of scored[0].e.classes) {
    if (c.objects < 3) continue;
    let best = { t: global, f: -1 };
    for (const s of scored) {
      const k = s.e.classes.find((x) => x.label === c.label)!;
      if (f1(k.recall, k.precision) > best.f) best = { t: s.t, f: f1(k.recall, k.precision) };
    }
    perClass.set(c.label, best.t);
  }
  return { perClass, global };
}

export async function run(): Promise<void> {
  const resamples = Number(process.env.BENCH_RESAMPLES ?? 1000);
  const repository = loadConfig().modelRepository;
  for (const modelName of MODELS) await prepareModel({ repository, modelName, cacheDir: defaultModelCacheDir(process.env, os.homedir()) });
  const set = await loadCocoSet(path.join(DATA, 'annotations.json'));
  const photos = new Map(await Promise.all(set.images.map(async (i) => [i.id, await readFile(path.join(DATA, 'images', i.file_name))] as const)));
  const objects = set.annotations.filter((a) => !a.iscrowd).length;
  process.stdout.write(`labelled set: ${set.images.length} photos, ${objects} objects, ${new Set(set.annotations.map((a) => a.category_id)).size} classes; ${resamples} bootstrap resamples over photos\n`);

  const views: Record<string, Record<ViewKind, ViewRun>> = {};
  for (const m of MODELS) views[m] = { plain: await runView(m, set, photos, 'plain'), mirrored: await runView(m, set, photos, 'mirrored'), tiles: await runView(m, set, photos, 'tiles') };
  const [cn, ssd] = [views.centernet, views.ssdlite];
  const nmsIou = loadConfig().nmsIou;
  const [cnTiled, ssdTiled] = [withTiles(cn.plain, cn.tiles, nmsIou), withTiles(ssd.plain, ssd.tiles, nmsIou)];
  const variants: Variant[] = [
    fused('centernet (fast, the default)', set, [{ run: cn.plain, weight: 1 }]),
    fused('centernet + mirrored', set, [{ run: cn.plain, weight: 1 }, { run: cn.mirrored, weight: 1 }]),
    fused('ssdlite', set, [{ run: ssd.plain, weight: 1 }]),
    fused('ssdlite + mirrored', set, [{ run: ssd.plain, weight: 1 }, { run: ssd.mirrored, weight: 1 }]),
    fused('centernet + ssdlite (accurate)', set, [{ run: cn.plain, weight: 1 }, { run: ssd.plain, weight: 1 }]),
    fused('centernet + ssdlite, ssdlite at 0.5', set, [{ run: cn.plain, weight: 1 }, { run: ssd.plain, weight: 0.5 }]),
    fused('both + both mirrored', set, [cn.plain, cn.mirrored, ssd.plain, ssd.mirrored].map((run) => ({ run, weight: 1 }))),
    fused(`centernet + tiles (photos >= ${TILE_FROM} px)`, set, [{ run: cnTiled, weight: 1 }]),
    fused('accurate, each model with tiles', set, [{ run: cnTiled, weight: 1 }, { run: ssdTiled, weight: 1 }]),
  ];
  const f = (n: number) => n.toFixed(3);
  process.stdout.write(`\n${'variant'.padEnd(38)} ${'mAP@0.5'.padEnd(23)} ${'vs fast, paired'.padEnd(18)} ${'thr'.padStart(4)} ${'recall'.padStart(6)} ${'prec'.padStart(6)} ${'CPU ms/photo'.padStart(12)}\n`);
  for (const v of variants) {
    const e = evaluate(set, v.results, () => v.threshold, 1);
    const b = bootstrap(set, [variants[0].results, v.results], [() => SINGLE_THRESHOLD, () => v.threshold], { resamples, seed: 1 });
    const interval = `[${f(b.models[1].map.low)}, ${f(b.models[1].map.high)}]`;
    const diff = v === variants[0] ? '' : `[${b.difference!.map.low >= 0 ? '+' : ''}${f(b.difference!.map.low)}, ${b.difference!.map.high >= 0 ? '+' : ''}${f(b.difference!.map.high)}]`;
    process.stdout.write(`${v.name.padEnd(38)} ${f(e.map)} ${interval.padEnd(17)} ${diff.padEnd(18)} ${v.threshold.toFixed(2).padStart(4)} ${f(e.recall).padStart(6)} ${f(e.precision).padStart(6)} ${v.cpuMsPerPhoto.toFixed(0).padStart(12)}\n`);
  }

  process.stdout.write('\nper-class thresholds: chosen on the even-numbered photos (best F1 per class with 3+ objects there), reported on the odd ones\n');
  const fit = subset(set, (id) => id % 2 === 0);
  const held = subset(set, (id) => id % 2 === 1);
  const of = (set: CocoSet, results: ImageDetections[]) => results.filter((r) => set.images.some((i) => i.id === r.imageId));
  for (const v of [variants[0], variants[4]]) {
    const { perClass, global } = perClassThresholds(fit, of(fit, v.results));
    const one = evaluate(held, of(held, v.results), () => global, 1);
    const own = evaluate(held, of(held, v.results), (label) => perClass.get(label) ?? global, 1);
    const chosen = [...perClass].map(([l, t]) => `${l} ${t}`).join(', ');
    process.stdout.write(`${v.name}: one threshold ${global}: recall ${f(one.recall)} precision ${f(one.precision)}; per class (${chosen}): recall ${f(own.recall)} precision ${f(own.precision)}\n`);
  }
}
