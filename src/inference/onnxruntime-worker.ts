/**
 * The ONNX Runtime session, on its own thread. onnxruntime-node runs a session
 * synchronously on the calling thread, so running it here keeps the event loop (HTTP,
 * timers, sharp callbacks) responsive during inference. One message in, one run, one
 * message out: the parent's FIFO queue decides what runs when.
 */
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { isShared } from './shared-rasters.js';

/** Messages between OnnxRuntimeBackend and this thread (ORT type names, not KServe's). */
export interface WorkerInit {
  modelPath: string;
  threads: number;
  spin: boolean;
}
export interface WireSpec {
  name: string;
  type: string;
  /** -1 for a symbolic dimension. */
  shape: number[];
}
export interface WireTensor {
  name: string;
  type: string;
  dims: number[];
  data: Float32Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array;
}
export interface WorkerRequest {
  id: number;
  inputs: WireTensor[];
}
export type WorkerReply =
  /** sharedInputs false: this runtime's Node-API cannot read shared memory, inputs are copied. */
  | { kind: 'ready'; inputs: WireSpec[]; outputs: WireSpec[]; sharedInputs: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'result'; id: number; outputs: WireTensor[] }
  | { kind: 'error'; id: number; message: string };

const init = workerData as WorkerInit;
const port = parentPort;
if (port === null) throw new Error('onnxruntime-worker must run in a worker thread');

function specs(meta: readonly ort.InferenceSession.ValueMetadata[]): WireSpec[] {
  return meta.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1)) } : { name: m.name, type: 'non-tensor', shape: [] }));
}

/**
 * Whether ONNX Runtime can read inputs on shared memory here. onnxruntime-node reads a
 * tensor's bytes with Node-API's napi_get_arraybuffer_info, which refuses a
 * SharedArrayBuffer ("Invalid argument") on Node.js releases older than the Node-API
 * change that accepts one (Node.js 20, early 22 and 24 releases). Measured at warm-up, not
 * guessed from the version; where it cannot, each shared input is copied before the run.
 */
let sharedInputs = true;

function toOrt(t: WireTensor): ort.Tensor {
  const data = !sharedInputs && isShared(t.data) ? t.data.slice() : t.data;
  return new ort.Tensor(t.type as ort.Tensor.Type, data as ort.Tensor.DataType, t.dims);
}

/** Zeros of the spec's shape (symbolic dimensions as 1), on shared memory when `shared`. */
function zeros(spec: WireSpec, shared: boolean): ort.Tensor {
  const dims = spec.shape.map((d) => (d < 0 ? 1 : d));
  const n = dims.reduce((a, b) => a * b, 1);
  const Typed: { new (buffer: ArrayBufferLike): ort.Tensor.DataType; BYTES_PER_ELEMENT: number } = spec.type === 'int64' ? BigInt64Array : spec.type === 'int32' ? Int32Array : spec.type === 'uint8' || spec.type === 'bool' ? Uint8Array : spec.type === 'float16' ? Uint16Array : Float32Array;
  const bytes = n * Typed.BYTES_PER_ELEMENT;
  return new ort.Tensor(spec.type as ort.Tensor.Type, new Typed(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes)), dims);
}

function warmUpFeeds(inputs: WireSpec[], shared: boolean): Record<string, ort.Tensor> {
  return Object.fromEntries(inputs.map((s) => [s.name, zeros(s, shared)]));
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(init.modelPath, {
    executionProviders: ['cpu'],
    intraOpNumThreads: init.threads,
    // One run at a time (the parent queues), so a second pool would only compete.
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Idle pool threads must not spin: sharp decodes the next images on the same cores.
    extra: { session: { intra_op: { allow_spinning: init.spin ? '1' : '0' } } },
  });
  const inputs = specs(session.inputMetadata);
  const outputs = specs(session.outputMetadata);
  // Warm-up: the first run allocates buffers and picks kernels; do it before serving. Its
  // inputs are on shared memory like the detector's; if that run fails and one on ordinary
  // memory succeeds, shared memory is what this runtime cannot pass to ONNX Runtime.
  try {
    await session.run(warmUpFeeds(inputs, true));
  } catch (err) {
    await session.run(warmUpFeeds(inputs, false)).catch(() => Promise.reject(err));
    sharedInputs = false;
  }
  port.postMessage({ kind: 'ready', inputs, outputs, sharedInputs } satisfies WorkerReply);
} catch (err) {
  port.postMessage({ kind: 'failed', message: message(err) } satisfies WorkerReply);
  process.exit(1);
}

port.on('message', async (req: WorkerRequest) => {
  try {
    const feeds: Record<string, ort.Tensor> = {};
    for (const t of req.inputs) feeds[t.name] = toOrt(t);
    const results = await session.run(feeds);
    const outputs: WireTensor[] = [];
    const transfer = new Set<ArrayBuffer>();
    for (const [name, value] of Object.entries(results)) {
      const data = value.data as WireTensor['data'];
      outputs.push({ name, type: value.type, dims: [...value.dims], data });
      transfer.add(data.buffer as ArrayBuffer);
    }
    port.postMessage({ kind: 'result', id: req.id, outputs } satisfies WorkerReply, [...transfer]);
  } catch (err) {
    port.postMessage({ kind: 'error', id: req.id, message: message(err) } satisfies WorkerReply);
  }
});
