/**
 * Model output → Detections: score threshold, class-aware non-maximum suppression (the
 * graph picks the top-100 peaks but keeps duplicates), boxes mapped back to the original
 * image as integer pixels clipped to it, labels and product ids from the catalog.
 */
import type { CatalogClass } from '../models/catalog.js';
import type { BoundingBox, Detection } from '../recognition/detection.js';
import type { ResizeGeometry } from './preprocess.js';

/** Values per detection row: x1, y1, x2, y2 (input pixels), score, class index. */
export const DETECTION_ROW = 6;

/** One candidate box, corners in original-image pixels (floats). */
export interface Candidate {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
  classIndex: number;
}

export interface PostprocessOptions {
  scoreThreshold: number;
  nmsIou: number;
  geometry: ResizeGeometry;
  classes: ReadonlyMap<number, CatalogClass>;
}

/**
 * Rows of one image ([rows, 6] starting at `offset`) → candidates at or above the
 * threshold, mapped to original pixels and clipped. Classes missing from the catalog are
 * dropped: an operator can narrow the catalog to the classes the product sells.
 */
export function decodeRows(data: Float32Array, offset: number, rows: number, options: Pick<PostprocessOptions, 'scoreThreshold' | 'geometry' | 'classes'>): Candidate[] {
  const { geometry: g, scoreThreshold, classes } = options;
  const out: Candidate[] = [];
  for (let r = 0; r < rows; r++) {
    const o = offset + r * DETECTION_ROW;
    const score = data[o + 4];
    if (!(score >= scoreThreshold)) continue; // also drops NaN
    const classIndex = Math.round(data[o + 5]);
    if (!classes.has(classIndex)) continue;
    const x1 = clip((data[o] - g.offsetX) / g.scaleX, g.width);
    const y1 = clip((data[o + 1] - g.offsetY) / g.scaleY, g.height);
    const x2 = clip((data[o + 2] - g.offsetX) / g.scaleX, g.width);
    const y2 = clip((data[o + 3] - g.offsetY) / g.scaleY, g.height);
    if (!(x2 > x1 && y2 > y1)) continue; // empty, inverted, or entirely in the padding
    out.push({ x1, y1, x2, y2, score, classIndex });
  }
  return out;
}

function clip(v: number, max: number): number {
  return Math.min(max, Math.max(0, v));
}

/** Intersection over union of two boxes; 0 when either is empty. */
export function iou(a: Candidate, b: Candidate): number {
  const iw = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1);
  const ih = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Greedy NMS per class: keep the best box, drop same-class boxes overlapping it by more
 * than `iouThreshold`, repeat. Boxes of different classes never suppress each other.
 * Returns the kept boxes, best first.
 */
export function nonMaxSuppression(candidates: readonly Candidate[], iouThreshold: number): Candidate[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const kept: Candidate[] = [];
  for (const c of sorted) {
    if (!kept.some((k) => k.classIndex === c.classIndex && iou(k, c) > iouThreshold)) kept.push(c);
  }
  return kept;
}

/** Float corners → integer {x, y, width, height} inside the image; null when nothing is left. */
export function toBoundingBox(c: Candidate, width: number, height: number): BoundingBox | null {
  const x = Math.min(width, Math.max(0, Math.round(c.x1)));
  const y = Math.min(height, Math.max(0, Math.round(c.y1)));
  const x2 = Math.min(width, Math.max(0, Math.round(c.x2)));
  const y2 = Math.min(height, Math.max(0, Math.round(c.y2)));
  if (x2 <= x || y2 <= y) return null;
  return { x, y, width: x2 - x, height: y2 - y };
}

/** One image's output rows → its Detections, most confident first. */
export function postprocess(data: Float32Array, offset: number, rows: number, options: PostprocessOptions): Detection[] {
  const kept = nonMaxSuppression(decodeRows(data, offset, rows, options), options.nmsIou);
  const detections: Detection[] = [];
  for (const c of kept) {
    const box = toBoundingBox(c, options.geometry.width, options.geometry.height);
    const cls = options.classes.get(c.classIndex);
    if (box === null || cls === undefined) continue;
    // Four decimals: more digits are noise from float32 and only clutter the JSON.
    detections.push({ label: cls.label, external_id: cls.external_id, bounding_box: box, confidence: Math.round(c.score * 1e4) / 1e4 });
  }
  return detections;
}

/** Any family's candidates → Detections: NMS, integer boxes, labels; most confident first. */
export function finishDetections(candidates: readonly Candidate[], nmsIou: number, geometry: ResizeGeometry, classes: ReadonlyMap<number, CatalogClass>): Detection[] {
  const detections: Detection[] = [];
  for (const c of nonMaxSuppression(candidates, nmsIou)) {
    const box = toBoundingBox(c, geometry.width, geometry.height);
    const cls = classes.get(c.classIndex);
    if (box === null || cls === undefined) continue;
    detections.push({ label: cls.label, external_id: cls.external_id, bounding_box: box, confidence: Math.round(c.score * 1e4) / 1e4 });
  }
  return detections;
}
