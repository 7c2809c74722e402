/**
 * ObjectDetector on top of any InferenceBackend: bytes → decode/resize (sharp, libuv
 * thread) → infer (queued, one at a time) → threshold, NMS, boxes in original pixels.
 * Calls run concurrently, so one image decodes while another is being inferred.
 */
import type { Catalog, CatalogClass } from '../models/catalog.js';
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from '../recognition/detection.js';
import { InferenceError, type InferenceBackend, type TensorSpec } from './backend.js';
import { DETECTION_ROW, postprocess } from './postprocess.js';
import { prepareImage, type InputSize, type ResizeFit } from './preprocess.js';

export interface DetectorOptions {
  scoreThreshold: number;
  nmsIou: number;
  /** Images over this many pixels are refused before decoding. */
  maxPixels: number;
  /** Default 'stretch' (see ResizeFit). */
  fit?: ResizeFit;
}

/** The model's contract: one NHWC float image input, one [N, rows, 6] float output. */
export interface DetectorIo {
  input: TensorSpec;
  output: TensorSpec;
  size: InputSize;
}

/** Finds the image input and the detections output in the served model's metadata. */
export function detectorIo(inputs: TensorSpec[], outputs: TensorSpec[]): DetectorIo {
  const input = inputs.find((s) => s.datatype === 'FP32' && s.shape.length === 4 && s.shape[3] === 3);
  const output = outputs.find((s) => s.datatype === 'FP32' && s.shape.length === 3 && s.shape[2] === DETECTION_ROW);
  if (input === undefined || output === undefined) {
    throw new Error(`the model does not look like the detector: expected an FP32 [N,H,W,3] input and an FP32 [N,K,${DETECTION_ROW}] output, got inputs ${describe(inputs)} and outputs ${describe(outputs)}`);
  }
  const [, height, width] = input.shape;
  if (!(height > 0 && width > 0)) throw new Error(`the model input ${input.name} must have a fixed height and width, got [${input.shape.join(',')}]`);
  return { input, output, size: { width, height } };
}

function describe(specs: TensorSpec[]): string {
  return specs.map((s) => `${s.name} ${s.datatype}[${s.shape.join(',')}]`).join(', ') || 'none';
}

export class Detector implements ObjectDetector {
  readonly model: ModelRef;
  private readonly classes: ReadonlyMap<number, CatalogClass>;
  private readonly io: DetectorIo;
  private readonly fit: ResizeFit;

  /** The backend must be started (its metadata is read here). */
  constructor(
    private readonly backend: InferenceBackend,
    catalog: Catalog,
    private readonly options: DetectorOptions,
  ) {
    const meta = backend.metadata();
    this.io = detectorIo(meta.inputs, meta.outputs);
    this.model = { ...catalog.model };
    this.classes = new Map(catalog.classes.map((c) => [c.index, c]));
    this.fit = options.fit ?? 'stretch';
  }

  labels(): string[] {
    return [...this.classes.values()].sort((a, b) => a.index - b.index).map((c) => c.label);
  }

  async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
    checkBudget(options);
    const t0 = performance.now();
    const prepared = await prepareImage(image, this.io.size, { maxPixels: this.options.maxPixels, fit: this.fit });
    const t1 = performance.now();
    checkBudget(options);
    const { input, output } = this.io;
    const outputs = await this.backend.infer(
      [{ name: input.name, datatype: 'FP32', shape: [1, this.io.size.height, this.io.size.width, 3], data: prepared.tensor }],
      { deadline: options.deadline, signal: options.signal },
    );
    const t2 = performance.now();
    const out = outputs.get(output.name);
    if (out === undefined || !(out.data instanceof Float32Array) || out.shape.length !== 3 || out.shape[2] !== DETECTION_ROW) {
      throw new InferenceError('INTERNAL', `the model returned no ${output.name} [1,K,${DETECTION_ROW}] FP32 tensor`);
    }
    const detections = postprocess(out.data, 0, out.shape[1], {
      scoreThreshold: this.options.scoreThreshold,
      nmsIou: this.options.nmsIou,
      geometry: prepared.geometry,
      classes: this.classes,
    });
    const t3 = performance.now();
    return {
      detections,
      width: prepared.geometry.width,
      height: prepared.geometry.height,
      model: this.model,
      timings: { decodeMs: t1 - t0, inferMs: t2 - t1, postprocessMs: t3 - t2 },
    };
  }
}

/** Decoding cannot be interrupted, so the budget is checked around it. */
function checkBudget(options: DetectOptions): void {
  if (options.signal?.aborted) throw new InferenceError('CANCELLED', 'detection cancelled by the caller');
  if (options.deadline !== undefined && Date.now() >= options.deadline) throw new InferenceError('DEADLINE_EXCEEDED', 'the detection deadline passed');
}
