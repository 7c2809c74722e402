/**
 * ObjectDetector on top of any InferenceBackend: bytes → decode/resize (sharp, libuv
 * thread) → infer (queued, one at a time) → threshold, NMS, boxes in original pixels.
 * Calls run concurrently, so one image decodes while another is being inferred.
 */
import type { Catalog, CatalogClass } from '../models/catalog.js';
import type { DetectorSpec } from '../models/detector-spec.js';
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from '../recognition/detection.js';
import { InferenceError, type InferenceBackend, type Tensor } from './backend.js';
import { checkServedModel, decodeOutputs, servedClassCount, toModelInput, type PixelDataType, type ThresholdOf } from './families.js';
import { finishDetections } from './postprocess.js';
import { prepareImage, type PreparedImage, type ResizeFit } from './preprocess.js';
import { SharedRasterPool } from './shared-rasters.js';

export interface DetectorOptions {
  /** Default lowest confidence; a catalog class's own threshold overrides it. */
  scoreThreshold: number;
  nmsIou: number;
  /** Images over this many pixels are refused before decoding. */
  maxPixels: number;
  /** Overrides the fit the model's family declares (see ResizeFit). */
  fit?: ResizeFit;
}

export class Detector implements ObjectDetector {
  readonly model: ModelRef;
  readonly spec: DetectorSpec;
  private readonly classes: ReadonlyMap<number, CatalogClass>;
  private readonly thresholdOf: ThresholdOf;
  /** Model-input rasters, reused (see SharedRasterPool). */
  private readonly rasters = new SharedRasterPool();
  /** What the served model takes: UINT8 pixels (it converts them) or FP32 (converted here). */
  readonly inputType: PixelDataType;

  /** The backend must be started (its metadata is read here). */
  constructor(
    private readonly backend: InferenceBackend,
    catalog: Catalog,
    private readonly options: DetectorOptions,
  ) {
    const meta = backend.metadata();
    this.spec = options.fit ? { ...catalog.detector, input: { ...catalog.detector.input, fit: options.fit } } : catalog.detector;
    this.inputType = checkServedModel(this.spec, meta.inputs, meta.outputs);
    checkCatalogFits(catalog, servedClassCount(this.spec, meta.outputs), meta.name);
    this.model = { ...catalog.model };
    this.classes = new Map(catalog.classes.map((c) => [c.index, c]));
    const thresholds = new Map(catalog.classes.map((c) => [c.index, c.threshold ?? options.scoreThreshold]));
    this.thresholdOf = (i) => thresholds.get(i);
  }

  labels(): string[] {
    return [...this.classes.values()].sort((a, b) => a.index - b.index).map((c) => c.label);
  }

  async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
    checkBudget(options);
    const t0 = performance.now();
    const { input } = this.spec;
    const length = input.width * input.height * 3;
    const raster = this.inputType === 'UINT8' ? this.rasters.takeBytes(length) : this.rasters.take(length);
    let prepared: PreparedImage;
    let outputs: Map<string, Tensor>;
    let t1: number;
    try {
      prepared = await prepareImage(image, input, { maxPixels: this.options.maxPixels, fit: input.fit, align: input.align, datatype: this.inputType, into: raster });
      const tensor = toModelInput(prepared.tensor, prepared.geometry, this.spec);
      t1 = performance.now();
      checkBudget(options);
      outputs = await this.backend.infer([tensor], { deadline: options.deadline, signal: options.signal });
    } finally {
      // Once infer() settles the raster is free: Triton's request was encoded when sent. A run
      // the embedded session could not stop (the caller gave up) may still read it, but that
      // run's outputs are dropped, so the next image writing into it harms nothing.
      this.rasters.give(raster);
    }
    const t2 = performance.now();
    const candidates = decodeOutputs(this.spec, outputs, prepared.geometry, this.thresholdOf);
    const detections = finishDetections(candidates, this.options.nmsIou, prepared.geometry, this.classes);
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

/**
 * A catalog written for another model would label detections silently wrong: every class
 * it maps must be one the served model can output. Fewer is allowed (a catalog narrowed
 * to the products sold drops the other classes), more is a different model.
 */
export function checkCatalogFits(catalog: Catalog, classCount: number | undefined, served: string): void {
  if (classCount === undefined) return;
  const outside = catalog.classes.filter((c) => c.index >= classCount);
  if (outside.length === 0) return;
  const first = outside[0];
  throw new Error(
    `the catalog of model "${catalog.model.name}" does not fit the served model "${served}": it maps ${catalog.classes.length} classes ` +
      `(index ${first.index}, ${first.label}${outside.length > 1 ? `, and ${outside.length - 1} more` : ''} beyond the model's ${classCount}); ` +
      'give the API the catalog written for this model (MODEL_CATALOG, or spec.api.catalogConfigMapRef)',
  );
}
