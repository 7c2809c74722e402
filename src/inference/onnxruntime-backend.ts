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
import { deadlineSignal } from '../deadline.js';
import { SharedRasterPool } from './shared-rasters.js';

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
   * Dynamic batching: when the session frees up, the calls already waiting (same input
   * shapes after the batch dimension) run as one batch of up to this many rows, then
   * each caller gets its own rows back. No call waits for others to arrive. Default 1.
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
  inputs: WireTensor[];
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
  private readonly queue: Job[] = [];
  /** The jobs on the worker (one batch) and its request id. */
  private running?: { id: number; jobs: Job[]; batch: WireTensor[] };
  /** Buffers batches are stacked into: a batch of 8 model inputs is 25 MB, so few are kept. */
  private readonly batchBuffers = new SharedRasterPool(2);
  private readonly maxBatch: number;
  private nextId = 1;
  private runs = 0;
  private executions = 0;
  private idleWaiters: Array<() => void> = [];
  private relaunches = 0;
  private relaunchTimer?: NodeJS.Timeout;
  /**
   * False when this Node.js cannot hand shared memory to ONNX Runtime (see the worker): each
   * model input is then copied on the inference thread, 3 MB per image.
   */
  sharedInputs = true;
  /** A session being loaded and warmed up: close() waits for it (see close()). */
  private launching?: Promise<void>;

  constructor(private readonly options: OnnxRuntimeBackendOptions) {
    this.threads = options.threads ?? os.availableParallelism();
    this.maxQueue = options.maxQueue ?? 256;
    this.maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 1));
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
        process.emitWarning(`Node.js ${process.version} cannot pass shared memory to ONNX Runtime: each model input is copied (3 MB per image); Node.js 24 avoids the copy`, { code: 'RECOG_INPUT_COPY' });
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
    let wire: WireTensor[];
    try {
      wire = this.validate(inputs);
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
        inputs: wire,
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
        const at = this.queue.indexOf(job);
        if (at >= 0) this.queue.splice(at, 1);
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
    for (const job of this.queue.splice(0)) job.reject(new InferenceError('UNAVAILABLE', 'the inference backend is shutting down'));
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
  private validate(inputs: Tensor[]): WireTensor[] {
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
      return { name: spec.name, type: KSERVE_TO_ORT[t.datatype], dims: [...t.shape], data: t.data };
    });
  }

  private pump(): void {
    if (this.running || this.state !== 'ready' || !this.worker) return;
    let job: Job | undefined;
    while ((job = this.queue.shift())) {
      // The deadline's signal may not have fired yet for a deadline that has just passed.
      const late = job.settled ? undefined : rejection(job.options);
      if (late) job.reject(late);
      if (!job.settled) break;
    }
    if (!job) {
      for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    const jobs = [job, ...this.takeCompanions(job)];
    const id = this.nextId++;
    // A batch is stacked into shared buffers of the backend's own, given back with the reply.
    const batch = jobs.length === 1 ? [] : concatRows(jobs.map((j) => j.inputs), this.batchBuffers);
    this.running = { id, jobs, batch };
    // Inputs on shared memory reach the worker as they are; others are copied (never
    // transferred: the caller keeps its buffers).
    this.worker.postMessage({ id, inputs: jobs.length === 1 ? job.inputs : batch });
  }

  /** Waiting jobs that can join `first` in one batch: same shapes after dim 0, rows within maxBatch. */
  private takeCompanions(first: Job): Job[] {
    const taken: Job[] = [];
    let rows = first.inputs[0]?.dims[0] ?? 1;
    for (let i = 0; i < this.queue.length && rows < this.maxBatch; ) {
      const job = this.queue[i];
      const late = job.settled ? undefined : rejection(job.options);
      if (late) job.reject(late);
      if (job.settled) {
        this.queue.splice(i, 1);
        continue;
      }
      const n = job.inputs[0]?.dims[0] ?? 1;
      if (rows + n <= this.maxBatch && sameTail(first.inputs, job.inputs)) {
        this.queue.splice(i, 1);
        taken.push(job);
        rows += n;
      } else {
        i++;
      }
    }
    return taken;
  }

  private onReply(m: WorkerReply): void {
    if ((m.kind !== 'result' && m.kind !== 'error') || this.running?.id !== m.id) return;
    const { jobs, batch } = this.running;
    this.running = undefined;
    for (const t of batch) if (t.data instanceof Float32Array) this.batchBuffers.give(t.data);
    if (m.kind === 'result') {
      this.runs += jobs.length;
      this.executions++;
      const parts = jobs.length === 1 ? [m.outputs] : splitRows(m.outputs, jobs.map((j) => j.inputs[0]?.dims[0] ?? 1));
      jobs.forEach((job, i) => {
        const part = parts?.[i];
        if (!part) return job.reject(new InferenceError('INTERNAL', 'ONNX Runtime returned outputs without the batch dimension first'));
        const outputs = new Map<string, Tensor>();
        for (const o of part) outputs.set(o.name, { name: o.name, datatype: ORT_TO_KSERVE[o.type] ?? 'FP32', shape: o.dims, data: o.data });
        job.resolve(outputs);
      });
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
    for (const job of this.queue.splice(0)) job.reject(err);
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.state === 'failed') this.scheduleRelaunch();
  }

  private scheduleRelaunch(): void {
    const delay = Math.min(MAX_RELAUNCH_DELAY_MS, 500 * 2 ** this.relaunches++);
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

/** Same names, types and dimensions after the first (the batch) in every input. */
function sameTail(a: WireTensor[], b: WireTensor[]): boolean {
  return a.length === b.length && a.every((t, i) => {
    const u = b[i];
    return t.name === u.name && t.type === u.type && t.dims.length === u.dims.length && t.dims.every((d, k) => k === 0 || d === u.dims[k]);
  });
}

/** The jobs' inputs stacked along dim 0 into one batch (FP32 inputs into shared buffers from `pool`). */
function concatRows(inputs: WireTensor[][], pool: SharedRasterPool): WireTensor[] {
  return inputs[0].map((first, i) => {
    const parts = inputs.map((job) => job[i]);
    const length = parts.reduce((n, p) => n + p.data.length, 0);
    const data = first.data instanceof Float32Array ? pool.take(length) : new (first.data.constructor as new (n: number) => WireTensor['data'])(length);
    let at = 0;
    for (const p of parts) {
      (data as Float32Array).set(p.data as Float32Array, at);
      at += p.data.length;
    }
    return { name: first.name, type: first.type, dims: [parts.reduce((n, p) => n + p.dims[0], 0), ...first.dims.slice(1)], data };
  });
}

/** One batch's outputs cut back into each job's rows; undefined when an output is not batch-first. */
function splitRows(outputs: WireTensor[], rows: number[]): WireTensor[][] | undefined {
  const total = rows.reduce((a, b) => a + b, 0);
  if (outputs.some((o) => o.dims[0] !== total)) return undefined;
  const result: WireTensor[][] = rows.map(() => []);
  for (const o of outputs) {
    const per = o.data.length / total;
    let row = 0;
    rows.forEach((n, j) => {
      result[j].push({ name: o.name, type: o.type, dims: [n, ...o.dims.slice(1)], data: o.data.slice(row * per, (row + n) * per) });
      row += n;
    });
  }
  return result;
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
