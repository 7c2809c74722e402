/**
 * The ONNX Runtime session, on its own thread. onnxruntime-node runs a session
 * synchronously on the calling thread, so running it here keeps the event loop (HTTP,
 * timers, sharp callbacks) responsive during inference. One message in, one run, one
 * message out: the parent's FIFO queue decides what runs when.
 */
import { parentPort, workerData } from 'node:worker_threads';
import ort from 'onnxruntime-node';

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
  | { kind: 'ready'; inputs: WireSpec[]; outputs: WireSpec[] }
  | { kind: 'failed'; message: string }
  | { kind: 'result'; id: number; outputs: WireTensor[] }
  | { kind: 'error'; id: number; message: string };

const init = workerData as WorkerInit;
const port = parentPort;
if (port === null) throw new Error('onnxruntime-worker must run in a worker thread');

function specs(meta: readonly ort.InferenceSession.ValueMetadata[]): WireSpec[] {
  return meta.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : -1)) } : { name: m.name, type: 'non-tensor', shape: [] }));
}

function toOrt(t: WireTensor): ort.Tensor {
  return new ort.Tensor(t.type as ort.Tensor.Type, t.data as ort.Tensor.DataType, t.dims);
}

function zeros(spec: WireSpec): ort.Tensor {
  const dims = spec.shape.map((d) => (d < 0 ? 1 : d));
  const n = dims.reduce((a, b) => a * b, 1);
  const data = spec.type === 'int64' ? new BigInt64Array(n) : spec.type === 'int32' ? new Int32Array(n) : spec.type === 'uint8' || spec.type === 'bool' ? new Uint8Array(n) : spec.type === 'float16' ? new Uint16Array(n) : new Float32Array(n);
  return new ort.Tensor(spec.type as ort.Tensor.Type, data, dims);
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
  // Warm-up: the first run allocates buffers and picks kernels; do it before serving.
  const feeds: Record<string, ort.Tensor> = {};
  for (const s of inputs) feeds[s.name] = zeros(s);
  await session.run(feeds);
  port.postMessage({ kind: 'ready', inputs, outputs } satisfies WorkerReply);
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
