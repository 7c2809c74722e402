/**
 * `recog model import`: turns a detector someone brings (an Ultralytics YOLO ONNX export,
 * a TF Object Detection API SSD, a CenterNet like ours) into a model repository entry:
 *
 *   <repository>/<name>/1/model.onnx   the file, its float image input made UINT8 pixels (below)
 *   <repository>/<name>/config.pbtxt   Triton configuration for its real tensor names and shapes
 *   <repository>/<name>/catalog.json   family + pre-processing, labels, external ids, thresholds
 *
 * The family is read from the graph (inputs, outputs, Ultralytics metadata); the model then
 * runs once on a real photo through the same Detector the service uses, and a model whose
 * outputs cannot be interpreted is refused before anything lands in the repository.
 *
 * The served model takes UINT8 NHWC pixels, as the decoder produces them: a float input is
 * replaced by one whose Cast, Transpose (for NCHW exports) and scale (1/255 for
 * Ultralytics) run inside the graph (uint8-input.ts), so clients send a quarter of the bytes
 * and convert nothing; the catalog declares that input (NHWC, scale 1). A model whose input
 * already is UINT8 is kept as it is.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Detector } from '../../src/inference/detector.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { parseCatalog, type Catalog, type CatalogClass } from '../../src/models/catalog.js';
import type { DetectorFamily, DetectorSpec } from '../../src/models/detector-spec.js';
import { renderTritonConfig, type TritonDataType, type TritonModelConfig } from '../../src/models/triton-config.js';
import type { Detection } from '../../src/recognition/detection.js';
import { COCO_CLASSES } from './coco.js';
import { inspectOnnx, type OnnxModelInfo, type OnnxTensorInfo } from './onnx-inspect.js';
import { withUint8Input } from './uint8-input.js';

export class ImportError extends Error {
  override readonly name = 'ImportError';
}

export interface ImportOptions {
  /** The ONNX file. */
  file: string;
  repository: string;
  /** Directory name in the repository (= Triton model name); default: the file's base name. */
  name?: string;
  family?: DetectorFamily;
  /** coco80, coco90 or a labels.txt path (one label per line, in class index order). */
  labels?: string;
  /** A catalog JSON ({classes: [{index, label, external_id, threshold?}]}) that replaces the labels. */
  catalog?: string;
  /** The photo of the trial run. */
  trialImage: string;
  /** Replace an existing entry of the same name. */
  force?: boolean;
  threads?: number;
  log?: (line: string) => void;
}

export interface ImportResult {
  modelDir: string;
  spec: DetectorSpec;
  classes: number;
  license?: string;
  trial: Detection[];
}

export async function importModel(o: ImportOptions): Promise<ImportResult> {
  const log = o.log ?? (() => {});
  if (o.file.endsWith('.json')) throw new ImportError(`${o.file}: TF.js graph models are converted by npm run model:prepare -- --model <name>; import takes an ONNX file`);
  let bytes: Buffer;
  try {
    bytes = await readFile(o.file);
  } catch (err) {
    throw new ImportError(`cannot read ${o.file}: ${(err as Error).message}`);
  }
  let info: OnnxModelInfo;
  try {
    info = inspectOnnx(bytes);
  } catch (err) {
    throw new ImportError(`${o.file}: ${(err as Error).message}`);
  }
  const name = o.name ?? path.basename(o.file).replace(/\.onnx$/i, '').replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(name)) throw new ImportError(`invalid model name "${name}" (letters, digits, _ . -)`);

  const interpreted = interpret(info, o.family, o.file);
  const { classCount } = interpreted;
  const served = uint8Served(bytes, info, interpreted.spec);
  const { spec } = served;
  const classes = await catalogClasses(o, info, spec, classCount, name);
  const catalog: Catalog = { model: { name, version: '1' }, detector: spec, classes };
  parseCatalog(JSON.parse(JSON.stringify(catalog)), 'the generated catalog'); // the service must accept what we write
  const license = info.metadata.license;
  const given = interpreted.spec.input;
  log(`import: ${o.file}: ${spec.family}, input ${given.name} ${given.layout} ${given.width}×${given.height} (${given.fit}${given.scale !== 1 ? `, ×${given.scale.toPrecision(4)}` : ''}) served as ${spec.input.layout} UINT8 pixels, ${classCount ?? classes.length} classes${license ? `, licence: ${license}` : ''}`);

  const repository = path.resolve(o.repository);
  const modelDir = path.join(repository, name);
  if (!o.force && (await stat(modelDir).then(() => true, () => false))) throw new ImportError(`${modelDir} already exists (use --force to replace it)`);
  await mkdir(repository, { recursive: true });
  // Staged beside the repository (Triton would take a folder inside it for a model).
  const staging = path.join(path.dirname(repository), `.${path.basename(repository)}.import-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(path.join(staging, '1'), { recursive: true });
    await writeFile(path.join(staging, '1', 'model.onnx'), served.bytes);
    await writeFile(path.join(staging, 'config.pbtxt'), renderTritonConfig(tritonConfigFor(name, served.info)));
    await writeFile(path.join(staging, 'catalog.json'), `${JSON.stringify(catalog, null, 2)}\n`);
    const trial = await trialRun(path.join(staging, '1', 'model.onnx'), catalog, o);
    log(`import: trial run on ${path.basename(o.trialImage)}: ${trial.length} detection(s)${trial.length ? `, best ${trial[0].label} ${trial[0].confidence}` : ''}`);
    const old = `${staging}.old`;
    const replaced = await rename(modelDir, old).then(() => true, () => false);
    await rename(staging, modelDir);
    if (replaced) await rm(old, { recursive: true, force: true });
    return { modelDir, spec, classes: classes.length, license, trial };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The model as served: a float image input becomes UINT8 NHWC pixels with the graph doing
 * what the spec asked of the client (cast, NCHW, scale); the spec then says NHWC, scale 1.
 */
function uint8Served(bytes: Buffer, info: OnnxModelInfo, spec: DetectorSpec): { bytes: Uint8Array; info: OnnxModelInfo; spec: DetectorSpec } {
  const input = info.inputs[0];
  if (input.type === 'uint8') return { bytes, info, spec: { ...spec, input: { ...spec.input, scale: 1 } } };
  const wrapped = withUint8Input(bytes, { input: input.name, layout: spec.input.layout, scale: spec.input.scale });
  return { bytes: wrapped, info: inspectOnnx(wrapped), spec: { ...spec, input: { ...spec.input, layout: 'NHWC', scale: 1 } } };
}

/** The family and its pre-processing from the graph's inputs and outputs (as the file takes them). */
export function interpret(info: OnnxModelInfo, forced: DetectorFamily | undefined, source: string): { spec: DetectorSpec; classCount?: number } {
  const refuse = (why: string): never => {
    throw new ImportError(`${source}: cannot interpret this model's outputs: ${why}. Inputs: ${describe(info.inputs)}; outputs: ${describe(info.outputs)}. Supported: Ultralytics YOLO v5u/v8/11/12 detect exports ([1, 4+C, anchors]), TF Object Detection API SSD (boxes, scores, classes, num_detections), CenterNet ([N, K, 6]).`);
  };
  if (info.inputs.length !== 1) refuse(`expected one image input, found ${info.inputs.length}`);
  const input = info.inputs[0];
  if ((input.type !== 'float32' && input.type !== 'uint8') || input.shape.length !== 4) refuse(`the input ${input.name} must be float32 or uint8 of rank 4`);
  const layout = input.shape[1] === 3 ? 'NCHW' : input.shape[3] === 3 ? 'NHWC' : refuse(`the input ${input.name} [${input.shape.join(',')}] has no 3-channel axis`);
  const [height, width] = layout === 'NCHW' ? [input.shape[2], input.shape[3]] : [input.shape[1], input.shape[2]];
  const imgsz = parseImgsz(info.metadata.imgsz);
  const size = { width: width > 0 ? width : imgsz?.[1] ?? refuse('the input size is dynamic and the file does not say it'), height: height > 0 ? height : imgsz?.[0] ?? refuse('the input size is dynamic and the file does not say it') };

  const family = forced ?? guessFamily(info) ?? refuse('its outputs match none of the known detector families');
  switch (family) {
    case 'yolo': {
      if (info.outputs.length !== 1) refuse(`a YOLO export has one output, this has ${info.outputs.length} (segmentation and pose exports are not detectors)`);
      const out = info.outputs[0];
      if (out.type !== 'float32' || out.shape.length !== 3) refuse(`the YOLO output ${out.name} must be float32 [1, 4+C, anchors]`);
      const [, rows, anchors] = out.shape;
      if (rows > 0 && anchors > 0 && rows > anchors) refuse(`the YOLO output ${out.name} [${out.shape.join(',')}] has anchors first (a YOLOv5 export with objectness, or a transposed one); export with Ultralytics 8+ (yolov5u, v8, 11, 12)`);
      if (!(rows > 4)) refuse(`the YOLO output ${out.name} [${out.shape.join(',')}] needs 4 box rows plus at least one class row`);
      if (info.metadata.task && info.metadata.task !== 'detect') refuse(`this is an Ultralytics "${info.metadata.task}" model, not a detector`);
      return {
        spec: { family, input: { name: input.name, layout, ...size, fit: 'letterbox', align: 'centre', scale: 1 / 255, pad: 114 }, outputs: { predictions: out.name } },
        classCount: rows - 4,
      };
    }
    case 'ssd': {
      const roles = ssdOutputs(info.outputs) ?? refuse('an SSD needs boxes [1,K,4], scores [1,K], classes [1,K] and num_detections [1] outputs');
      return { spec: { family, input: { name: input.name, layout, ...size, fit: 'stretch', align: 'corner', scale: 1, pad: 0 }, outputs: roles } };
    }
    case 'centernet': {
      const out = info.outputs.find((t) => t.shape.length === 3 && t.shape[2] === 6) ?? refuse('a CenterNet output is [N, K, 6]');
      return { spec: { family, input: { name: input.name, layout, ...size, fit: 'stretch', align: 'corner', scale: 1, pad: 0 }, outputs: { detections: out.name } } };
    }
  }
}

function guessFamily(info: OnnxModelInfo): DetectorFamily | undefined {
  if (ssdOutputs(info.outputs)) return 'ssd';
  if (info.outputs.length === 1 && info.outputs[0].shape.length === 3) {
    const [, a, b] = info.outputs[0].shape;
    if (b === 6 && info.inputs[0]?.shape[3] === 3) return 'centernet';
    if (info.metadata.author === 'Ultralytics' || (a > 4 && b > a)) return 'yolo';
    if (a > 4 && b > 0 && a > b) return 'yolo'; // refused in interpret() with the reason
  }
  return undefined;
}

function ssdOutputs(outputs: OnnxTensorInfo[]): Record<string, string> | undefined {
  const by = (re: RegExp, rank: number) => outputs.find((t) => re.test(t.name) && t.shape.length === rank)?.name;
  const boxes = by(/box/i, 3);
  const scores = by(/score/i, 2);
  const classes = by(/class/i, 2);
  const count = by(/num/i, 1);
  return boxes && scores && classes && count ? { boxes, scores, classes, count } : undefined;
}

function parseImgsz(v: string | undefined): [number, number] | undefined {
  const m = v?.match(/^\[\s*(\d+)\s*,\s*(\d+)\s*\]$/);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function describe(ts: OnnxTensorInfo[]): string {
  return ts.map((t) => `${t.name} ${t.type}[${t.shape.join(',')}]`).join(', ') || 'none';
}

/** Labels and ids: --catalog, else --labels, else the names an Ultralytics export carries. */
async function catalogClasses(o: ImportOptions, info: OnnxModelInfo, spec: DetectorSpec, classCount: number | undefined, name: string): Promise<CatalogClass[]> {
  const check = (classes: CatalogClass[], what: string): CatalogClass[] => {
    const outside = classes.find((c) => classCount !== undefined && c.index >= classCount);
    if (outside) throw new ImportError(`${what}: class index ${outside.index} (${outside.label}) is outside the model's ${classCount} classes`);
    return classes;
  };
  if (o.catalog) {
    let raw: { classes?: unknown };
    try {
      raw = JSON.parse(await readFile(o.catalog, 'utf8')) as { classes?: unknown };
    } catch (err) {
      throw new ImportError(`cannot read the catalog ${o.catalog}: ${(err as Error).message}`);
    }
    try {
      return check(parseCatalog({ model: { name, version: '1' }, classes: raw.classes }, o.catalog).classes, o.catalog);
    } catch (err) {
      throw new ImportError((err as Error).message);
    }
  }
  const labels = o.labels ?? (info.metadata.names ? undefined : spec.family === 'ssd' ? 'coco90' : undefined);
  if (labels === 'coco80') {
    if (classCount !== undefined && classCount !== 80) throw new ImportError(`--labels coco80: the model has ${classCount} classes, not 80 (give a labels.txt or --catalog)`);
    return COCO_CLASSES.map((c) => ({ index: c.index, label: c.label, external_id: `coco:${c.cocoId}` }));
  }
  if (labels === 'coco90') {
    // Models trained on the COCO label map number classes by the official category id.
    return COCO_CLASSES.map((c) => ({ index: c.cocoId, label: c.label, external_id: `coco:${c.cocoId}` }));
  }
  let names: string[];
  if (labels) {
    try {
      names = (await readFile(labels, 'utf8')).split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
    } catch (err) {
      throw new ImportError(`cannot read the labels file ${labels}: ${(err as Error).message}`);
    }
  } else if (info.metadata.names) {
    names = parseUltralyticsNames(info.metadata.names);
  } else {
    throw new ImportError(`${o.file}: the model carries no class names; give --labels coco80|coco90|labels.txt or --catalog catalog.json`);
  }
  if (classCount !== undefined && names.length !== classCount) throw new ImportError(`${labels ?? 'the model\'s names'}: ${names.length} labels for ${classCount} classes`);
  const isCoco80 = names.length === 80 && names.every((n, i) => n === COCO_CLASSES[i].label);
  return names.map((label, index) => ({ index, label, external_id: isCoco80 ? `coco:${COCO_CLASSES[index].cocoId}` : `${name}:${index}` }));
}

/** Ultralytics writes names as a Python dict literal: {0: 'person', 1: 'bicycle', …}. */
export function parseUltralyticsNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/(\d+)\s*:\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g)) names[Number(m[1])] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  if (names.length === 0 || names.some((n) => n === undefined)) throw new ImportError(`cannot read the class names in the model's metadata: ${text.slice(0, 80)}`);
  return names;
}

const TRITON_TYPE: Record<string, TritonDataType> = { float32: 'TYPE_FP32', float16: 'TYPE_FP16', int32: 'TYPE_INT32', int64: 'TYPE_INT64', uint8: 'TYPE_UINT8', bool: 'TYPE_BOOL' };

/** config.pbtxt for the model's real tensors: batching only when its batch axis is dynamic. */
export function tritonConfigFor(name: string, info: OnnxModelInfo): TritonModelConfig {
  const dynamicBatch = [...info.inputs, ...info.outputs].every((t) => t.shape[0] === -1);
  const tensor = (t: OnnxTensorInfo) => {
    const dataType = TRITON_TYPE[t.type];
    if (!dataType) throw new ImportError(`tensor ${t.name}: type ${t.type} is not served`);
    const dims = dynamicBatch ? t.shape.slice(1) : t.shape;
    // Triton refuses empty dims on a batching model: a [batch] tensor is [1] to clients.
    return dims.length === 0 && dynamicBatch ? { name: t.name, dataType, dims: [1], reshape: [] } : { name: t.name, dataType, dims };
  };
  return {
    name,
    platform: 'onnxruntime_onnx',
    maxBatchSize: dynamicBatch ? 8 : 0,
    inputs: info.inputs.map(tensor),
    outputs: info.outputs.map(tensor),
    instanceGroups: [{ count: 1 }],
    ...(dynamicBatch ? { dynamicBatching: { maxQueueDelayMicroseconds: 2000 } } : {}),
  };
}

/** One real photo through the service's own Detector; any failure refuses the import. */
async function trialRun(modelPath: string, catalog: Catalog, o: ImportOptions): Promise<Detection[]> {
  let image: Buffer;
  try {
    image = await readFile(o.trialImage);
  } catch (err) {
    throw new ImportError(`cannot read the trial image ${o.trialImage}: ${(err as Error).message}`);
  }
  const backend = new OnnxRuntimeBackend({ modelPath, modelName: catalog.model.name, modelVersion: '1', threads: o.threads });
  try {
    await backend.start();
    const detector = new Detector(backend, catalog, { scoreThreshold: 0.3, nmsIou: 0.5, maxPixels: 40_000_000 });
    return (await detector.detect(image)).detections;
  } catch (err) {
    throw new ImportError(`the trial run failed, so the model is not imported: ${(err as Error).message}`, { cause: err });
  } finally {
    await backend.close();
  }
}
