/**
 * The seam between the recognition pipeline and whatever runs the model: the embedded
 * ONNX Runtime session, or NVIDIA Triton over gRPC (KServe v2). Both speak in named
 * tensors with KServe v2 datatypes, so the pipeline never knows which one it talks to.
 */

/** KServe v2 tensor datatypes used by this service. */
export type TensorDataType = 'FP32' | 'FP16' | 'INT64' | 'INT32' | 'UINT8' | 'BOOL';

export type TensorData = Float32Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array;

export interface Tensor {
  name: string;
  datatype: TensorDataType;
  /** Row-major shape; the batch dimension included. */
  shape: number[];
  data: TensorData;
}

export interface TensorSpec {
  name: string;
  datatype: TensorDataType;
  /** -1 marks a variable dimension (the batch dimension when max_batch_size > 0). */
  shape: number[];
}

export interface ModelMetadata {
  name: string;
  version: string;
  /** e.g. "onnxruntime_onnx" */
  platform: string;
  inputs: TensorSpec[];
  outputs: TensorSpec[];
}

export interface InferOptions {
  /** Absolute deadline (epoch milliseconds); the backend gives up after it. */
  deadline?: number;
  signal?: AbortSignal;
}

export type BackendKind = 'onnxruntime' | 'triton';

export interface InferenceBackend {
  readonly kind: BackendKind;
  /** Loads/connects and warms up; resolves when the model can serve. */
  start(): Promise<void>;
  /** Metadata of the served model (available after start). */
  metadata(): ModelMetadata;
  /** True when the server and the model are ready to serve. */
  ready(): Promise<boolean>;
  /** Runs the model on one batch of named inputs; returns the named outputs. */
  infer(inputs: Tensor[], options?: InferOptions): Promise<Map<string, Tensor>>;
  close(): Promise<void>;
}

/** Why inference failed, independent of the backend that failed. */
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
