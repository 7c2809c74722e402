/**
 * The detector port. Its result types are the public contract's (a box in integer pixels of the
 * original image, top-left origin, clipped to it; a 0..1 confidence; the catalog's product id).
 */
import type { BoundingBox, Detection, ModelRef } from '../contract/public-api.js';

export type { BoundingBox, Detection, ModelRef };

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
  /** Chooses the side of a canary (src/recognition/canary.ts): the request's external_id. Absent: the stable model. */
  routingKey?: string;
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

/**
 * Why inference failed, independent of the backend that failed (ONNX Runtime, Triton).
 * The detector's failure type: src/inference throws it, the pipeline maps it to an outcome.
 */
export type InferenceErrorCode =
  | 'UNAVAILABLE' // backend unreachable or restarting
  | 'DEADLINE_EXCEEDED' // the request's time budget ran out
  | 'MODEL_NOT_READY'
  | 'INVALID_INPUT'
  | 'RESOURCE_EXHAUSTED'
  | 'CANCELLED'
  | 'INTERNAL';

const HTTP_STATUS: Record<InferenceErrorCode, number> = {
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
  MODEL_NOT_READY: 503,
  INVALID_INPUT: 400,
  // Server-side overload or a message above its size limit: not the API client's rate limit (429).
  RESOURCE_EXHAUSTED: 503,
  CANCELLED: 499,
  INTERNAL: 500,
};

export class InferenceError extends Error {
  override readonly name = 'InferenceError';
  constructor(
    readonly code: InferenceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The HTTP-like status reported as CVResult.response_code. */
  get responseCode(): number {
    return HTTP_STATUS[this.code];
  }
}
