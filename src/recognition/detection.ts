/** Result types of the recognition use case, shaped as the public contract names them. */

export interface BoundingBox {
  /** Integers in the pixel space of the original image, top-left origin, clipped to it. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Detection {
  label: string;
  /** The product id of the class, from the model catalog. */
  external_id: string;
  bounding_box: BoundingBox;
  /** 0..1 */
  confidence: number;
}

export interface ModelRef {
  name: string;
  version: string;
}

/** What the detector reports for one image. */
export interface DetectionOutcome {
  detections: Detection[];
  /** Size of the original image after EXIF orientation. */
  width: number;
  height: number;
  model: ModelRef;
  /** Milliseconds spent in each stage, for logs, metrics and benchmarks. */
  timings: { decodeMs: number; inferMs: number; postprocessMs: number };
}

export interface DetectOptions {
  /** Absolute deadline, epoch ms. */
  deadline?: number;
  signal?: AbortSignal;
}

/**
 * One image's bytes in, its detections out. Implemented by src/inference/detector.ts on
 * top of an InferenceBackend; the recognition use case depends only on this.
 */
export interface ObjectDetector {
  detect(image: Uint8Array, options?: DetectOptions): Promise<DetectionOutcome>;
  readonly model: ModelRef;
  /** Labels the model can produce (catalog order). */
  labels(): string[];
}
