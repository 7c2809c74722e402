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
  /** Why it is not ready yet (the last start failure), for /readyz; absent when unknown. */
  readonly lastError?: string;
  /** Runs the model on one batch of named inputs; returns the named outputs. */
  infer(inputs: Tensor[], options?: InferOptions): Promise<Map<string, Tensor>>;
  close(): Promise<void>;
}

/**
 * Why inference failed: defined with the detector port in src/recognition/detection.ts
 * (the pipeline maps it to an outcome); backends throw it, so it is re-exported here.
 */
export { InferenceError, type InferenceErrorCode } from '../recognition/detection.js';
