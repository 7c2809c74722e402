/**
 * The detector families behind one contract: a prepared image becomes the model's input
 * tensor as the family declares (layout, size, fit, scaling), and the model's outputs
 * become candidates (corners in original-image pixels, class index, score) that the
 * shared post-processing thresholds, suppresses and labels.
 */
import type { DetectorSpec } from '../models/detector-spec.js';
import { InferenceError, type Tensor, type TensorSpec } from './backend.js';
import type { Candidate } from './postprocess.js';
import type { ResizeGeometry } from './preprocess.js';

/** Per-class score threshold; undefined drops the class (not in the catalog). */
export type ThresholdOf = (classIndex: number) => number | undefined;

/** The pixel datatypes a served model may take: floats, or bytes it converts itself. */
export type PixelDataType = 'FP32' | 'UINT8';

/**
 * NHWC RGB 0–255 (the decoder's raster, content at its offset, black elsewhere) → the
 * family's input tensor for one image. Works in place when the layout is NHWC. A float
 * raster is scaled and laid out as the family declares (FP32 models); a byte raster goes
 * to a UINT8 model, which does its own conversion, so only the padding is filled (and
 * planes split, for a UINT8 model that wants NCHW).
 */
export function toModelInput(raster: Float32Array | Uint8Array, geometry: ResizeGeometry, spec: DetectorSpec): Tensor {
  fillPadding(raster, geometry, spec);
  if (raster instanceof Float32Array) return floatInput(raster, spec);
  // A UINT8 model scales inside its graph (checkServedModel refuses a catalog scale ≠ 1).
  const { width, height, layout } = spec.input;
  let data = raster;
  if (layout === 'NCHW') {
    const plane = width * height;
    data = new Uint8Array(plane * 3);
    for (let p = 0, i = 0; p < plane; p++, i += 3) {
      data[p] = raster[i];
      data[plane + p] = raster[i + 1];
      data[2 * plane + p] = raster[i + 2];
    }
  }
  const shape = layout === 'NCHW' ? [1, 3, height, width] : [1, height, width, 3];
  return { name: spec.input.name, datatype: 'UINT8', shape, data };
}

/** The letterbox padding filled with the family's pad value (0–255), in place. */
function fillPadding(raster: Float32Array | Uint8Array, geometry: ResizeGeometry, spec: DetectorSpec): void {
  const { width, height, pad } = spec.input;
  const { contentWidth: cw, contentHeight: ch, offsetX: ox, offsetY: oy } = geometry;
  if (pad !== 0 && (cw < width || ch < height)) {
    for (let y = 0; y < height; y++) {
      const row = y * width * 3;
      if (y < oy || y >= oy + ch) {
        raster.fill(pad, row, row + width * 3);
        continue;
      }
      raster.fill(pad, row, row + ox * 3);
      raster.fill(pad, row + (ox + cw) * 3, row + width * 3);
    }
  }
}

function floatInput(raster: Float32Array, spec: DetectorSpec): Tensor {
  const { width, height, layout, scale } = spec.input;
  let data = raster;
  if (layout === 'NCHW') {
    const plane = width * height;
    data = new Float32Array(plane * 3);
    for (let p = 0, i = 0; p < plane; p++, i += 3) {
      data[p] = raster[i] * scale;
      data[plane + p] = raster[i + 1] * scale;
      data[2 * plane + p] = raster[i + 2] * scale;
    }
  } else if (scale !== 1) {
    for (let i = 0; i < data.length; i++) data[i] *= scale;
  }
  const shape = layout === 'NCHW' ? [1, 3, height, width] : [1, height, width, 3];
  return { name: spec.input.name, datatype: 'FP32', shape, data };
}

/**
 * Checks the served model against the declared family: names, ranks, the input size, and
 * the input's datatype: FP32 (the client scales and lays out the floats) or UINT8 (the
 * model converts the pixels itself). Returns that datatype: what the detector sends.
 */
export function checkServedModel(spec: DetectorSpec, inputs: TensorSpec[], outputs: TensorSpec[]): PixelDataType {
  const input = inputs.find((t) => t.name === spec.input.name);
  const expected = spec.input.layout === 'NCHW' ? [-1, 3, spec.input.height, spec.input.width] : [-1, spec.input.height, spec.input.width, 3];
  if (!input || input.shape.length !== 4 || !input.shape.every((d, i) => i === 0 || d === -1 || d === expected[i])) {
    throw new Error(`the served model does not match its catalog's ${spec.family} detector: expected an FP32 input ${spec.input.name} [${expected.join(',')}] (or UINT8 pixels), got ${describe(inputs)}`);
  }
  if (input.datatype !== 'FP32' && input.datatype !== 'UINT8') {
    throw new Error(`the served model's input ${spec.input.name} is ${input.datatype}; the service sends image pixels as FP32 (0–255, scaled as the catalog says) or UINT8 (0–255, the model converts them): export the model with one of those`);
  }
  if (input.datatype === 'UINT8' && spec.input.scale !== 1) {
    throw new Error(`the served model's input ${spec.input.name} is UINT8, but its catalog scales pixels by ${spec.input.scale}: bytes cannot carry scaled values, so a UINT8 model scales inside its graph (catalog input.scale 1)`);
  }
  for (const [role, name] of Object.entries(spec.outputs)) {
    if (!outputs.some((t) => t.name === name)) throw new Error(`the served model has no output ${name} (the ${spec.family} ${role}); it has ${describe(outputs)}`);
  }
  return input.datatype;
}

/**
 * How many classes the served model can output, when its output shape says so: YOLO's
 * `[N, 4 + C, A]`. CenterNet and SSD emit class indices as data, so no count is declared.
 */
export function servedClassCount(spec: DetectorSpec, outputs: TensorSpec[]): number | undefined {
  if (spec.family !== 'yolo') return undefined;
  const rows = outputs.find((t) => t.name === spec.outputs.predictions)?.shape[1];
  return rows !== undefined && rows > 4 ? rows - 4 : undefined;
}

function describe(specs: TensorSpec[]): string {
  return specs.map((s) => `${s.name} ${s.datatype}[${s.shape.join(',')}]`).join(', ') || 'none';
}

/** The model's outputs for one image → candidates at or above their class's threshold. */
export function decodeOutputs(spec: DetectorSpec, outputs: Map<string, Tensor>, geometry: ResizeGeometry, thresholdOf: ThresholdOf): Candidate[] {
  const out = (role: string): Tensor => {
    const name = spec.outputs[role];
    const t = outputs.get(name);
    if (t === undefined) throw new InferenceError('INTERNAL', `the model returned no ${name} tensor (${spec.family} ${role})`);
    return t;
  };
  const box = new BoxMapper(geometry);
  switch (spec.family) {
    case 'centernet':
      return decodeCenternet(floats(out('detections'), 3), box, thresholdOf);
    case 'yolo':
      return decodeYolo(floats(out('predictions'), 3), box, thresholdOf);
    case 'ssd':
      // count is [N] (TF OD API) or [N, 1] (what a batching Triton config can declare without a reshape).
      return decodeSsd(floats(out('boxes'), 3), floats(out('scores'), 2), floats(out('classes'), 2), floats(out('count'), out('count').shape.length === 2 ? 2 : 1), spec, box, thresholdOf);
  }
}

function floats(t: Tensor, rank: number): { data: Float32Array; shape: number[] } {
  if (!(t.data instanceof Float32Array) || t.shape.length !== rank || t.shape[0] < 1) {
    throw new InferenceError('INTERNAL', `output ${t.name}: expected FP32 of rank ${rank} with batch ≥ 1, got ${t.datatype} [${t.shape.join(',')}]`);
  }
  return { data: t.data, shape: t.shape };
}

/** Model-input pixels → original pixels, clipped; null for empty boxes (e.g. in the padding). */
class BoxMapper {
  constructor(private readonly g: ResizeGeometry) {}
  candidate(x1: number, y1: number, x2: number, y2: number, score: number, classIndex: number): Candidate | null {
    const g = this.g;
    const x = (v: number) => clip((v - g.offsetX) / g.scaleX, g.width);
    const y = (v: number) => clip((v - g.offsetY) / g.scaleY, g.height);
    const c = { x1: x(x1), y1: y(y1), x2: x(x2), y2: y(y2), score, classIndex };
    return c.x2 > c.x1 && c.y2 > c.y1 ? c : null;
  }
}

function clip(v: number, max: number): number {
  return Math.min(max, Math.max(0, v));
}

function accept(score: number, threshold: number | undefined): boolean {
  return threshold !== undefined && score >= threshold; // NaN never passes
}

/** [1, K, 6]: x1, y1, x2, y2 (input pixels), score, class index. */
function decodeCenternet(t: { data: Float32Array; shape: number[] }, box: BoxMapper, thresholdOf: ThresholdOf): Candidate[] {
  if (t.shape[2] !== 6) throw new InferenceError('INTERNAL', `centernet output: expected [N, K, 6], got [${t.shape.join(',')}]`);
  const out: Candidate[] = [];
  for (let r = 0, o = 0; r < t.shape[1]; r++, o += 6) {
    const score = t.data[o + 4];
    const cls = Math.round(t.data[o + 5]);
    if (!accept(score, thresholdOf(cls))) continue;
    const c = box.candidate(t.data[o], t.data[o + 1], t.data[o + 2], t.data[o + 3], score, cls);
    if (c) out.push(c);
  }
  return out;
}

/**
 * Ultralytics v8/11/12 export: [1, 4 + C, A], anchors along the last axis; rows 0–3 are
 * cx, cy, w, h in input pixels, rows 4… the per-class scores (already sigmoid). Each
 * anchor gives its best class (as Ultralytics' own NMS does with multi_label off).
 */
function decodeYolo(t: { data: Float32Array; shape: number[] }, box: BoxMapper, thresholdOf: ThresholdOf): Candidate[] {
  const [, rows, anchors] = t.shape;
  const classes = rows - 4;
  if (classes < 1) throw new InferenceError('INTERNAL', `yolo output: expected [N, 4 + classes, anchors], got [${t.shape.join(',')}]`);
  const d = t.data;
  const out: Candidate[] = [];
  for (let a = 0; a < anchors; a++) {
    let best = -1;
    let score = -Infinity;
    for (let k = 0; k < classes; k++) {
      const s = d[(4 + k) * anchors + a];
      if (s > score) {
        score = s;
        best = k;
      }
    }
    if (!accept(score, thresholdOf(best))) continue;
    const cx = d[a];
    const cy = d[anchors + a];
    const hw = d[2 * anchors + a] / 2;
    const hh = d[3 * anchors + a] / 2;
    const c = box.candidate(cx - hw, cy - hh, cx + hw, cy + hh, score, best);
    if (c) out.push(c);
  }
  return out;
}

/**
 * TF Object Detection API export: boxes [1, K, 4] = ymin, xmin, ymax, xmax as fractions
 * of the input, scores [1, K], classes [1, K] (the label map's ids, as floats), count [1].
 */
function decodeSsd(
  boxes: { data: Float32Array; shape: number[] },
  scores: { data: Float32Array; shape: number[] },
  classes: { data: Float32Array; shape: number[] },
  count: { data: Float32Array; shape: number[] },
  spec: DetectorSpec,
  box: BoxMapper,
  thresholdOf: ThresholdOf,
): Candidate[] {
  const k = boxes.shape[1];
  if (boxes.shape[2] !== 4 || scores.shape[1] !== k || classes.shape[1] !== k) {
    throw new InferenceError('INTERNAL', `ssd outputs: expected boxes [N, K, 4], scores and classes [N, K], got [${boxes.shape.join(',')}], [${scores.shape.join(',')}], [${classes.shape.join(',')}]`);
  }
  const n = Math.min(k, Math.max(0, Math.round(count.data[0])));
  const { width, height } = spec.input;
  const out: Candidate[] = [];
  for (let r = 0; r < n; r++) {
    const score = scores.data[r];
    const cls = Math.round(classes.data[r]);
    if (!accept(score, thresholdOf(cls))) continue;
    const o = r * 4;
    const c = box.candidate(boxes.data[o + 1] * width, boxes.data[o] * height, boxes.data[o + 3] * width, boxes.data[o + 2] * height, score, cls);
    if (c) out.push(c);
  }
  return out;
}
