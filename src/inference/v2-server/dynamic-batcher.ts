/**
 * Dynamic batching as Triton does it: requests queue per model; when an execution slot
 * is free, the queued requests are gathered up to max_batch_size (or until the oldest has
 * waited max_queue_delay), concatenated along the batch dimension, run once, and the
 * outputs are split back row by row. Requests that piled up while the model was busy go
 * out together at the next slot, so batches grow exactly when load does.
 */
import type { Tensor } from '../backend.js';
import { allocateTensorData } from '../triton/tensor-codec.js';
import { V2Error } from './errors.js';
import { status as Status } from '@grpc/grpc-js';

export type RunModel = (inputs: Tensor[]) => Promise<Map<string, Tensor>>;

export interface DynamicBatcherOptions {
  /** 0: the model does not batch; every request runs alone, as given. */
  maxBatchSize: number;
  /** How long the oldest request may wait for others to join (µs). 0: never wait. */
  maxQueueDelayUs: number;
  /** A batch of this size goes out without waiting (the largest preferred size); default max. */
  preferredBatchSize?: number;
  /** Requests allowed to wait; more are refused UNAVAILABLE (Triton's answer to a full queue). */
  maxQueueSize: number;
  /** Executions at a time (the model's instance count). */
  concurrency: number;
  run: RunModel;
  onExecuted?: (batchSize: number, ns: { input: number; infer: number; output: number }) => void;
}

export interface BatchedResult {
  outputs: Map<string, Tensor>;
  queueNs: number;
}

interface Pending {
  inputs: Tensor[];
  rows: number;
  /** Non-batch dimensions of every input: only equal ones can share a batch. */
  signature: string;
  enqueuedAt: bigint;
  resolve(r: BatchedResult): void;
  reject(err: unknown): void;
  detach(): void;
}

export class DynamicBatcher {
  private readonly queue: Pending[] = [];
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private flushing = false;

  constructor(private readonly opts: DynamicBatcherOptions) {}

  get queued(): number {
    return this.queue.length;
  }

  /** Queues one request (inputs carry the batch dimension when maxBatchSize > 0). */
  submit(inputs: Tensor[], signal?: AbortSignal): Promise<BatchedResult> {
    if (this.queue.length >= this.opts.maxQueueSize) {
      return Promise.reject(new V2Error(Status.UNAVAILABLE, `Exceeds maximum queue size (${this.opts.maxQueueSize} requests waiting)`));
    }
    if (signal?.aborted) return Promise.reject(new V2Error(Status.CANCELLED, 'cancelled before it was queued'));
    const rows = this.opts.maxBatchSize > 0 ? inputs[0].shape[0] : 1;
    return new Promise<BatchedResult>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.queue.indexOf(item);
        if (i >= 0) {
          this.queue.splice(i, 1);
          reject(new V2Error(Status.CANCELLED, 'cancelled while queued'));
          this.notifyIdle();
        }
      };
      const item: Pending = {
        inputs,
        rows,
        signature: inputs.map((t) => `${t.name}:${t.shape.slice(1).join('x')}`).join('|'),
        enqueuedAt: process.hrtime.bigint(),
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(item);
      this.pump();
    });
  }

  /** Resolves when nothing is queued or running (graceful shutdown). */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** From now on, queued requests go out without waiting for their batch to fill (shutdown). */
  flush(): void {
    this.flushing = true;
    this.pump();
  }

  /** Refuses everything still queued (forced shutdown). */
  abortQueued(reason: string): void {
    for (const item of this.queue.splice(0)) {
      item.detach();
      item.reject(new V2Error(Status.UNAVAILABLE, reason));
    }
    this.notifyIdle();
  }

  private pump(): void {
    while (this.running < this.opts.concurrency && this.queue.length > 0) {
      if (!this.shouldDispatch()) {
        this.armTimer();
        return;
      }
      this.dispatch(this.take());
    }
  }

  private shouldDispatch(): boolean {
    if (this.opts.maxBatchSize === 0 || this.flushing) return true;
    const full = Math.min(this.opts.preferredBatchSize ?? this.opts.maxBatchSize, this.opts.maxBatchSize);
    let rows = 0;
    for (const p of this.queue) {
      if (p.signature !== this.queue[0].signature) return true; // the batch cannot grow further
      rows += p.rows;
      if (rows >= full) return true;
    }
    const waitedUs = Number(process.hrtime.bigint() - this.queue[0].enqueuedAt) / 1000;
    return waitedUs >= this.opts.maxQueueDelayUs;
  }

  private armTimer(): void {
    if (this.timer) return;
    const waitedUs = Number(process.hrtime.bigint() - this.queue[0].enqueuedAt) / 1000;
    const ms = Math.max(0, (this.opts.maxQueueDelayUs - waitedUs) / 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
  }

  /** The longest run of queued requests, from the front, that fits one batch. */
  private take(): Pending[] {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const first = this.queue.shift()!;
    const batch = [first];
    if (this.opts.maxBatchSize === 0) return batch;
    let rows = first.rows;
    while (this.queue.length > 0) {
      const next = this.queue[0];
      if (next.signature !== first.signature || rows + next.rows > this.opts.maxBatchSize) break;
      batch.push(this.queue.shift()!);
      rows += next.rows;
    }
    return batch;
  }

  private dispatch(batch: Pending[]): void {
    this.running += 1;
    const startedAt = process.hrtime.bigint();
    for (const p of batch) p.detach(); // past this point a cancel cannot unschedule it
    void this.execute(batch, startedAt).finally(() => {
      this.running -= 1;
      this.pump();
      this.notifyIdle();
    });
  }

  private async execute(batch: Pending[], startedAt: bigint): Promise<void> {
    try {
      const t0 = process.hrtime.bigint();
      const single = batch.length === 1;
      const inputs = single ? batch[0].inputs : concatInputs(batch.map((p) => p.inputs));
      const t1 = process.hrtime.bigint();
      const outputs = await this.opts.run(inputs);
      const t2 = process.hrtime.bigint();
      const parts = single ? [outputs] : splitOutputs(outputs, batch.map((p) => p.rows));
      const t3 = process.hrtime.bigint();
      const rows = batch.reduce((n, p) => n + p.rows, 0);
      this.opts.onExecuted?.(rows, { input: Number(t1 - t0), infer: Number(t2 - t1), output: Number(t3 - t2) });
      batch.forEach((p, i) => p.resolve({ outputs: parts[i], queueNs: Number(startedAt - p.enqueuedAt) }));
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }

  private notifyIdle(): void {
    if (this.queue.length > 0 || this.running > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

/** Concatenates each named input of every request along dimension 0. */
export function concatInputs(requests: Tensor[][]): Tensor[] {
  return requests[0].map((first) => {
    const parts = requests.map((inputs) => inputs.find((t) => t.name === first.name)!);
    const rows = parts.reduce((n, t) => n + t.shape[0], 0);
    const total = parts.reduce((n, t) => n + t.data.length, 0);
    const data = allocateTensorData(first.datatype, total);
    let offset = 0;
    for (const t of parts) {
      (data as Float32Array).set(t.data as Float32Array, offset);
      offset += t.data.length;
    }
    return { name: first.name, datatype: first.datatype, shape: [rows, ...first.shape.slice(1)], data };
  });
}

/** Splits every output along dimension 0 into consecutive pieces of `rows[i]` rows. */
export function splitOutputs(outputs: Map<string, Tensor>, rows: number[]): Array<Map<string, Tensor>> {
  const total = rows.reduce((a, b) => a + b, 0);
  const result = rows.map(() => new Map<string, Tensor>());
  for (const [name, t] of outputs) {
    if (t.shape[0] !== total) throw new V2Error(Status.INTERNAL, `output ${name} has ${t.shape[0]} rows for a batch of ${total}`);
    const perRow = total === 0 ? 0 : t.data.length / total;
    let row = 0;
    rows.forEach((n, i) => {
      const data = t.data.slice(row * perRow, (row + n) * perRow);
      result[i].set(name, { name, datatype: t.datatype, shape: [n, ...t.shape.slice(1)], data });
      row += n;
    });
  }
  return result;
}
