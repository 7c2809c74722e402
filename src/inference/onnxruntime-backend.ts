/**
 * The embedded inference backend: one ONNX Runtime session (CPU execution provider) on a
 * worker thread, fed by a FIFO queue, so one inference runs at a time with every
 * configured thread, and the CPU is never oversubscribed by parallel sessions. A caller
 * whose deadline passes or whose signal aborts while queued is rejected without running.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import {
  InferenceError,
  type InferenceBackend,
  type InferOptions,
  type ModelMetadata,
  type Tensor,
  type TensorDataType,
  type TensorSpec,
} from './backend.js';
import type { WireSpec, WireTensor, WorkerInit, WorkerReply } from './onnxruntime-worker.js';
import { backoffDelay } from '../backoff.js';
import { deadlineSignal } from '../deadline.js';
import { BatchQueue, splitOutputs, stackInputs } from './batching.js';
import { isShared, SharedRasterPool } from './shared-rasters.js';

export interface OnnxRuntimeBackendOptions {
  /** Path of model.onnx. */
  modelPath: string;
  /** Reported in metadata(). */
  modelName: string;
  modelVersion?: string;
  /** ORT intra-op threads; default: all cores. */
  threads?: number;
  /** Callers allowed to wait; more are refused with RESOURCE_EXHAUSTED. Default 256. */
  maxQueue?: number;
  /** Let idle ORT threads spin-wait (lower latency alone, but steals CPU from decoding). Default false. */
  spin?: boolean;
  /**
   * Dynamic batching: when the session frees up, the calls waiting at the front of the
   * queue with the same input shapes after the batch dimension run as one batch of up to
   * this many rows (batching.ts), then each caller gets its own rows back. No call waits
   * for others to arrive. Default 1.
   */
  maxBatch?: number;
}

const ORT_TO_KSERVE: Record<string, TensorDataType> = {
  float32: 'FP32',
  float16: 'FP16',
  int64: 'INT64',
  int32: 'INT32',
  uint8: 'UINT8',
  bool: 'BOOL',
};
const KSERVE_TO_ORT: Record<TensorDataType, string> = {
  FP32: 'float32',
  FP16: 'float16',
  INT64: 'int64',
  INT32: 'int32',
  UINT8: 'uint8',
  BOOL: 'bool',
};
const MAX_RELAUNCH_DELAY_MS = 30_000;

const ARRAY_OF: Record<TensorDataType, new (...args: never[]) => unknown> = {
  FP32: Float32Array,
  FP16: Uint16Array,
  INT64: BigInt64Array,
  INT32: Int32Array,
  UINT8: Uint8Array,
  BOOL: Uint8Array,
};

interface Job {
  /** Checked against the model, in its input order. */
  inputs: Tensor[];
  options: InferOptions;
  resolve(outputs: Map<string, Tensor>): void;
  reject(err: InferenceError): void;
  /** Set once the caller has its answer; a late worker reply is then dropped. */
  settled: boolean;
  cleanup(): void;
}

type State = 'new' | 'starting' | 'ready' | 'failed' | 'closed';

export class OnnxRuntimeBackend implements InferenceBackend {
  readonly kind = 'onnxruntime' as const;
  private readonly threads: number;
  private readonly maxQueue: number;
  private state: State = 'new';
  private worker?: Worker;
  private meta?: ModelMetadata;
  private readonly queue: BatchQueue<Job>;
  /** The jobs on the worker (one batch, each with its rows), the stacked inputs and the request id. */
  private running?: { id: number; jobs: Job[]; rows: number[]; batch: Tensor[] };
  /** Buffers batches are stacked into: a batch of 8 FP32 model inputs is 25 MB (6 MB as UINT8), so few are kept. */
  private readonly batchBuffers = new SharedRasterPool(2);
  private nextId = 1;
  private runs = 0;
  private executions = 0;
  private idleWaiters: Array<() => void> = [];
  private relaunches = 0;
  private relaunchTimer?: NodeJS.Timeout;
  /**
   * False when this Node.js cannot hand shared memory to ONNX Runtime (see the worker): each
   * model input is then copied on the inference thread (0.75 MB per image for a 512×512 UINT8 input).
   */
  sharedInputs = true;
  /** A session being loaded and warmed up: close() waits for it (see close()). */
  private launching?: Promise<void>;

  constructor(private readonly options: OnnxRuntimeBackendOptions) {
    this.threads = options.threads ?? os.availableParallelism();
    this.maxQueue = options.maxQueue ?? 256;
    this.queue = new BatchQueue(Math.max(1, Math.floor(options.maxBatch ?? 1)));
  }

  /** Callers waiting for the session (not counting the one running). */
  get queueDepth(): number {
    return this.queue.length;
  }

  /** Inferences the session has finished since start (warm-up excluded). */
  get completedRuns(): number {
    return this.runs;
  }

  /** Session runs since start: fewer than completedRuns when calls were batched. */
  get completedExecutions(): number {
    return this.executions;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new InferenceError('INTERNAL', `the ONNX Runtime backend cannot start from state ${this.state}`);
    this.state = 'starting';
    try {
      await this.launch();
    } catch (err) {
      if (this.state === 'starting') this.state = 'failed';
      throw err;
    }
    // close() during the warm-up wins: it terminates the thread once the warm-up is over.
    if ((this.state as State) === 'closed') throw new InferenceError('UNAVAILABLE', 'the inference backend was closed while starting');
    this.state = 'ready';
  }

  /** Spawns the session thread and waits until it has loaded and warmed up the model. */
  private launch(): Promise<void> {
    const launching = this.spawnSession();
    this.launching = launching;
    return launching;
  }

  private async spawnSession(): Promise<void> {
    const init: WorkerInit = { modelPath: this.options.modelPath, threads: this.threads, spin: this.options.spin ?? false };
    const worker = spawnWorker(init);
    this.worker = worker;
    // Listeners are removed one by one: Worker.removeAllListeners() would also drop
    // Node's own and silently stop message delivery.
    let removeStartupListeners = (): void => {};
    try {
      const ready = await new Promise<Extract<WorkerReply, { kind: 'ready' }>>((resolve, reject) => {
        const onMessage = (m: WorkerReply): void => (m.kind === 'ready' ? resolve(m) : reject(new Error(m.kind === 'failed' ? m.message : `unexpected ${m.kind}`)));
        const onExit = (code: number): void => reject(new Error(`worker exited with code ${code}`));
        worker.on('message', onMessage).on('error', reject).on('exit', onExit);
        removeStartupListeners = () => {
          worker.off('message', onMessage).off('error', reject).off('exit', onExit);
        };
      });
      if (this.sharedInputs && !ready.sharedInputs) {
        process.emitWarning(`Node.js ${process.version} cannot pass shared memory to ONNX Runtime: each model input is copied; Node.js 24 avoids the copy`, { code: 'RECOG_INPUT_COPY' });
      }
      this.sharedInputs = ready.sharedInputs;
      this.meta = {
        name: this.options.modelName,
        version: this.options.modelVersion ?? '1',
        platform: 'onnxruntime_onnx',
        inputs: ready.inputs.map(toSpec),
        outputs: ready.outputs.map(toSpec),
      };
    } catch (err) {
      if (this.worker === worker) this.worker = undefined;
      await worker.terminate();
      throw new InferenceError('MODEL_NOT_READY', `cannot load the model ${this.options.modelPath}: ${(err as Error).message}`, { cause: err });
    } finally {
      removeStartupListeners();
    }
    worker.on('message', (m: WorkerReply) => this.onReply(m));
    worker.on('error', (err: unknown) => this.onWorkerDeath(worker, `the inference thread failed: ${err instanceof Error ? err.message : String(err)}`));
    worker.on('exit', (code) => this.onWorkerDeath(worker, `the inference thread exited (code ${code})`));
  }

  metadata(): ModelMetadata {
    if (this.meta === undefined) throw new InferenceError('MODEL_NOT_READY', 'the model is not loaded yet (call start())');
    return this.meta;
  }

  async ready(): Promise<boolean> {
    return this.state === 'ready';
  }

  infer(inputs: Tensor[], options: InferOptions = {}): Promise<Map<string, Tensor>> {
    if (this.state !== 'ready') {
      const down = this.state === 'failed' || this.state === 'closed';
      return Promise.reject(new InferenceError(down ? 'UNAVAILABLE' : 'MODEL_NOT_READY', `the ONNX Runtime backend is ${this.state === 'failed' ? 'down' : this.state === 'closed' ? 'closed' : 'not started'}`));
    }
    let checked: Tensor[];
    try {
      checked = this.validate(inputs);
    } catch (err) {
      return Promise.reject(err);
    }
    const early = rejection(options);
    if (early) return Promise.reject(early);
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new InferenceError('RESOURCE_EXHAUSTED', `${this.queue.length} inferences are already waiting`));
    }

    return new Promise<Map<string, Tensor>>((resolve, reject) => {
      // The caller's signal and the deadline in one signal; the caller's own abort is CANCELLED.
      const signal = options.deadline !== undefined ? deadlineSignal(options.deadline, options.signal) : options.signal;
      const onAbort = (): void =>
        giveUp(
          options.signal?.aborted
            ? new InferenceError('CANCELLED', 'inference cancelled by the caller')
            : new InferenceError('DEADLINE_EXCEEDED', 'the inference deadline passed'),
        );
      const job: Job = {
        inputs: checked,
        options,
        settled: false,
        resolve: (v) => {
          if (job.settled) return;
          job.settled = true;
          job.cleanup();
          resolve(v);
        },
        reject: (e) => {
          if (job.settled) return;
          job.settled = true;
          job.cleanup();
          reject(e);
        },
        cleanup: () => {
          signal?.removeEventListener('abort', onAbort);
        },
      };
      // Queued: leave the queue without running. Running: answer the caller now; the
      // session finishes the run (ORT cannot stop it) and its result is dropped.
      const giveUp = (err: InferenceError): void => {
        this.queue.remove(job);
        job.reject(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasReady = this.state === 'ready';
    this.state = 'closed';
    clearTimeout(this.relaunchTimer);
    for (const job of this.queue.drain()) job.reject(new InferenceError('UNAVAILABLE', 'the inference backend is shutting down'));
    // Let the run in progress (or the warm-up) finish: its caller gets its answer, and
    // terminating a thread inside session.run can abort the whole process in
    // onnxruntime-node.
    if (wasReady && this.running) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    await this.launching?.catch(() => undefined);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  /** Checks names, types and shapes against the model, so ORT never sees a bad input. */
  private validate(inputs: Tensor[]): Tensor[] {
    const meta = this.metadata();
    const byName = new Map(inputs.map((t) => [t.name, t]));
    if (byName.size !== inputs.length) throw new InferenceError('INVALID_INPUT', 'an input tensor is given twice');
    for (const t of inputs) {
      if (!meta.inputs.some((s) => s.name === t.name)) throw new InferenceError('INVALID_INPUT', `the model has no input named "${t.name}" (inputs: ${meta.inputs.map((s) => s.name).join(', ')})`);
    }
    return meta.inputs.map((spec) => {
      const t = byName.get(spec.name);
      if (t === undefined) throw new InferenceError('INVALID_INPUT', `missing input tensor "${spec.name}"`);
      if (t.datatype !== spec.datatype) throw new InferenceError('INVALID_INPUT', `input "${spec.name}" must be ${spec.datatype}, got ${t.datatype}`);
      const shapeOk = t.shape.length === spec.shape.length && t.shape.every((d, i) => Number.isInteger(d) && d > 0 && (spec.shape[i] === -1 || spec.shape[i] === d));
      if (!shapeOk) throw new InferenceError('INVALID_INPUT', `input "${spec.name}" has shape [${t.shape.join(',')}], the model takes [${spec.shape.join(',')}]`);
      const count = t.shape.reduce((a, b) => a * b, 1);
      if (!(t.data instanceof ARRAY_OF[t.datatype]) || t.data.length !== count) {
        throw new InferenceError('INVALID_INPUT', `input "${spec.name}" needs ${count} ${t.datatype} values, got ${t.data.length} in a ${t.data.constructor.name}`);
      }
      return t;
    });
  }

  private pump(): void {
    if (this.running || this.state !== 'ready' || !this.worker) return;
    // The deadline's signal may not have fired yet for a deadline that has just passed.
    this.queue.removeWhere((job) => {
      const late = rejection(job.options);
      if (late) job.reject(late);
      return late !== undefined;
    });
    const { jobs, rows } = this.queue.take();
    if (jobs.length === 0) {
      for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    const id = this.nextId++;
    // A batch is stacked into shared buffers of the backend's own, given back with the reply.
    const batch = jobs.length === 1 ? [] : stackInputs(jobs.map((j) => j.inputs), (datatype, n) => (datatype === 'FP32' ? this.batchBuffers.take(n) : datatype === 'UINT8' ? this.batchBuffers.takeBytes(n) : undefined));
    this.running = { id, jobs, rows, batch };
    // Inputs on shared memory reach the worker as they are; others are copied (never
    // transferred: the caller keeps its buffers).
    this.worker.postMessage({ id, inputs: (jobs.length === 1 ? jobs[0].inputs : batch).map(toWire) });
  }

  private onReply(m: WorkerReply): void {
    if ((m.kind !== 'result' && m.kind !== 'error') || this.running?.id !== m.id) return;
    const { jobs, rows, batch } = this.running;
    this.running = undefined;
    for (const t of batch) if (t.data instanceof Float32Array || t.data instanceof Uint8Array) this.batchBuffers.give(t.data);
    if (m.kind === 'result') {
      this.runs += jobs.length;
      this.executions++;
      const outputs = new Map(m.outputs.map((o): [string, Tensor] => [o.name, { name: o.name, datatype: ORT_TO_KSERVE[o.type] ?? 'FP32', shape: o.dims, data: o.data }]));
      try {
        const parts = jobs.length === 1 ? [outputs] : splitOutputs(outputs, rows);
        jobs.forEach((job, i) => job.resolve(parts[i]));
      } catch (err) {
        for (const job of jobs) job.reject(err as InferenceError);
      }
    } else {
      for (const job of jobs) job.reject(new InferenceError('INTERNAL', `ONNX Runtime failed: ${m.message}`));
    }
    if (this.state === 'closed') {
      for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.pump();
  }

  /**
   * The session thread died (a native crash, or out of memory): everyone waiting gets
   * UNAVAILABLE, ready() turns false, and the thread is relaunched with backoff, so the
   * service heals without a restart of the whole process.
   */
  private onWorkerDeath(worker: Worker, reason: string): void {
    if (worker !== this.worker) return; // 'error' is followed by 'exit': handle once
    this.worker = undefined;
    if (this.state !== 'closed') this.state = 'failed';
    const err = new InferenceError('UNAVAILABLE', reason);
    for (const job of this.running?.jobs ?? []) job.reject(err);
    this.running = undefined;
    for (const job of this.queue.drain()) job.reject(err);
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.state === 'failed') this.scheduleRelaunch();
  }

  private scheduleRelaunch(): void {
    const delay = backoffDelay(this.relaunches++, { baseMs: 500, capMs: MAX_RELAUNCH_DELAY_MS });
    this.relaunchTimer = setTimeout(() => {
      this.launch().then(
        () => {
          if (this.state !== 'failed') return void this.worker?.terminate(); // closed meanwhile
          this.state = 'ready';
          this.relaunches = 0;
        },
        () => {
          if (this.state === 'failed') this.scheduleRelaunch();
        },
      );
    }, delay);
    // A pending relaunch must not keep a finished CLI process alive.
    this.relaunchTimer.unref();
  }
}

function rejection(options: InferOptions): InferenceError | undefined {
  if (options.signal?.aborted) return new InferenceError('CANCELLED', 'inference cancelled by the caller');
  if (options.deadline !== undefined && options.deadline <= Date.now()) return new InferenceError('DEADLINE_EXCEEDED', 'the inference deadline passed before it could start');
  return undefined;
}

function toWire(t: Tensor): WireTensor {
  // A view into a larger buffer (a Buffer from a pool, say) would be cloned whole: send only its bytes.
  // (Buffer's own slice() is a view, so a Buffer is copied as a Uint8Array.)
  const data = isShared(t.data) || t.data.byteLength === t.data.buffer.byteLength ? t.data : Buffer.isBuffer(t.data) ? new Uint8Array(t.data) : t.data.slice();
  return { name: t.name, type: KSERVE_TO_ORT[t.datatype], dims: [...t.shape], data };
}

function toSpec(s: WireSpec): TensorSpec {
  const datatype = ORT_TO_KSERVE[s.type];
  if (datatype === undefined) throw new Error(`tensor "${s.name}" has type ${s.type}, which this service does not handle`);
  return { name: s.name, datatype, shape: s.shape };
}

/** From compiled JS the worker is a sibling .js file; from source (tsx) it needs tsx's loader in its thread too. */
function spawnWorker(init: WorkerInit): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./onnxruntime-worker.js', here), { workerData: init });
  const entry = new URL('./onnxruntime-worker.ts', here).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: init });
}
