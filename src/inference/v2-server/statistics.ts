/**
 * Per-model counters in the shape of Triton's statistics extension (ModelStatistics RPC,
 * GET /v2/models/<name>/stats): requests, inferences, executions, time per stage, and
 * one entry per executed batch size, which is how batching is observed from outside.
 */
import type { ModelStatisticsMsg, StatisticDuration } from '../triton/messages.js';

const duration = (): StatisticDuration => ({ count: 0, ns: 0 });

function add(d: StatisticDuration, ns: number, count = 1): void {
  d.count += count;
  d.ns += Math.max(0, Math.round(ns));
}

export class ModelStatistics {
  private lastInference = 0;
  private inferenceCount = 0;
  private executionCount = 0;
  private readonly success = duration();
  private readonly fail = duration();
  private readonly queue = duration();
  private readonly computeInput = duration();
  private readonly computeInfer = duration();
  private readonly computeOutput = duration();
  private readonly batches = new Map<number, { input: StatisticDuration; infer: StatisticDuration; output: StatisticDuration }>();

  constructor(
    readonly name: string,
    readonly version: string,
  ) {}

  /** A request answered successfully: batchSize inferences, `totalNs` end to end. */
  requestSucceeded(batchSize: number, totalNs: number, queueNs: number): void {
    this.inferenceCount += batchSize;
    this.lastInference = Date.now();
    add(this.success, totalNs);
    add(this.queue, queueNs);
  }

  requestFailed(totalNs: number): void {
    add(this.fail, totalNs);
  }

  /** One model execution of `batchSize` rows (possibly several requests). */
  executed(batchSize: number, ns: { input: number; infer: number; output: number }): void {
    this.executionCount += 1;
    add(this.computeInput, ns.input);
    add(this.computeInfer, ns.infer);
    add(this.computeOutput, ns.output);
    let b = this.batches.get(batchSize);
    if (!b) {
      b = { input: duration(), infer: duration(), output: duration() };
      this.batches.set(batchSize, b);
    }
    add(b.input, ns.input);
    add(b.infer, ns.infer);
    add(b.output, ns.output);
  }

  snapshot(): ModelStatisticsMsg {
    const copy = (d: StatisticDuration): StatisticDuration => ({ ...d });
    return {
      name: this.name,
      version: this.version,
      last_inference: this.lastInference,
      inference_count: this.inferenceCount,
      execution_count: this.executionCount,
      inference_stats: {
        success: copy(this.success),
        fail: copy(this.fail),
        queue: copy(this.queue),
        compute_input: copy(this.computeInput),
        compute_infer: copy(this.computeInfer),
        compute_output: copy(this.computeOutput),
      },
      batch_stats: [...this.batches.entries()]
        .sort(([a], [b]) => a - b)
        .map(([size, b]) => ({ batch_size: size, compute_input: copy(b.input), compute_infer: copy(b.infer), compute_output: copy(b.output) })),
    };
  }
}
