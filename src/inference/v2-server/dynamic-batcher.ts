/**
 * Dynamic batching as Triton does it: requests queue per model; when an execution slot
 * is free, the queued requests are gathered up to max_batch_size (or until the oldest has
 * waited max_queue_delay), concatenated along the batch dimension, run once, and the
 * outputs are split back row by row. Requests that piled up while the model was busy go
 * out together at the next slot, so batches grow exactly when load does. The queue, the
 * grouping rule and the stacking are ../batching.ts's; the waiting rule is Triton's, here.
 */
import type { Tensor } from '../backend.js';
import { BatchQueue, splitOutputs, stackInputs, type Batch } from '../batching.js';
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
  enqueuedAt: bigint;
  resolve(r: BatchedResult): void;
  reject(err: unknown): void;
  detach(): void;
}

export class DynamicBatcher {
  private readonly queue: BatchQueue<Pending>;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private flushing = false;

  constructor(private readonly opts: DynamicBatcherOptions) {
    this.queue = new BatchQueue(opts.maxBatchSize);
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Queues one request (inputs carry the batch dimension when maxBatchSize > 0). */
  submit(inputs: Tensor[], signal?: AbortSignal): Promise<BatchedResult> {
    if (this.queue.length >= this.opts.maxQueueSize) {
      return Promise.reject(new V2Error(Status.UNAVAILABLE, `Exceeds maximum queue size (${this.opts.maxQueueSize} requests waiting)`));
    }
    if (signal?.aborted) return Promise.reject(new V2Error(Status.CANCELLED, 'cancelled before it was queued'));
    return new Promise<BatchedResult>((resolve, reject) => {
      const onAbort = (): void => {
        if (this.queue.remove(item)) {
          reject(new V2Error(Status.CANCELLED, 'cancelled while queued'));
          this.notifyIdle();
        }
      };
      const item: Pending = {
        inputs,
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
    for (const item of this.queue.drain()) {
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
    const next = this.queue.peek();
    if (next.complete || next.rows >= full) return true; // waiting cannot make it better
    return this.waitedUs() >= this.opts.maxQueueDelayUs;
  }

  /** How long the oldest request has waited (µs). */
  private waitedUs(): number {
    return Number(process.hrtime.bigint() - this.queue.oldest!.enqueuedAt) / 1000;
  }

  private armTimer(): void {
    if (this.timer) return;
    const ms = Math.max(0, (this.opts.maxQueueDelayUs - this.waitedUs()) / 1000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, ms);
  }

  private take(): Batch<Pending> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    return this.queue.take();
  }

  private dispatch(batch: Batch<Pending>): void {
    this.running += 1;
    const startedAt = process.hrtime.bigint();
    for (const p of batch.jobs) p.detach(); // past this point a cancel cannot unschedule it
    void this.execute(batch, startedAt).finally(() => {
      this.running -= 1;
      this.pump();
      this.notifyIdle();
    });
  }

  private async execute({ jobs, rows }: Batch<Pending>, startedAt: bigint): Promise<void> {
    try {
      const t0 = process.hrtime.bigint();
      const single = jobs.length === 1;
      const inputs = single ? jobs[0].inputs : stackInputs(jobs.map((p) => p.inputs));
      const t1 = process.hrtime.bigint();
      const outputs = await this.opts.run(inputs);
      const t2 = process.hrtime.bigint();
      const parts = single ? [outputs] : splitOutputs(outputs, rows);
      const t3 = process.hrtime.bigint();
      this.opts.onExecuted?.(rows.reduce((n, r) => n + r, 0), { input: Number(t1 - t0), infer: Number(t2 - t1), output: Number(t3 - t2) });
      jobs.forEach((p, i) => p.resolve({ outputs: parts[i], queueNs: Number(startedAt - p.enqueuedAt) }));
    } catch (err) {
      for (const p of jobs) p.reject(err);
    }
  }

  private notifyIdle(): void {
    if (this.queue.length > 0 || this.running > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
