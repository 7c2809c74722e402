/**
 * The capacity gate of decode and inference: at most `concurrency` images at once, at most
 * `queueLength` waiting for a slot, and a refusal (CapacityExceeded, answered 503 with
 * Retry-After) when both are full, so latency cannot grow without bound and the memory
 * held by decodes stays below the pixel limit times the concurrency.
 */
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from './detection.js';

export class CapacityExceeded extends Error {
  override readonly name = 'CapacityExceeded';
  constructor(readonly retryAfterSeconds: number) {
    super('the service is at capacity: every decode/inference slot is busy and the queue is full');
  }
}

export interface GateStats {
  active: number;
  queued: number;
  /** Most slots ever taken at once (never above the concurrency). */
  peakActive: number;
  refused: number;
}

export class CapacityGate {
  private active = 0;
  private peakActive = 0;
  private refused = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly concurrency: number,
    readonly queueLength: number,
    /** What a refusal tells the client to wait, in seconds. */
    private readonly retryAfterSeconds = 1,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer (got ${concurrency})`);
    if (!Number.isInteger(queueLength) || queueLength < 0) throw new RangeError(`queueLength must be a non-negative integer (got ${queueLength})`);
  }

  stats(): GateStats {
    return { active: this.active, queued: this.waiting.length, peakActive: this.peakActive, refused: this.refused };
  }

  /** Takes a slot (waiting in the queue if need be); throws CapacityExceeded when the queue is full. Call the returned release once. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.active < this.concurrency && this.waiting.length === 0) {
      this.active++;
      this.peakActive = Math.max(this.peakActive, this.active);
      return this.releaser();
    }
    if (this.waiting.length >= this.queueLength) {
      this.refused++;
      throw new CapacityExceeded(this.retryAfterSeconds);
    }
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(turn);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(turn);
    });
    // The slot was handed over by release(): `active` already counts it.
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // Handed straight to the next in line, so no newcomer can slip in between.
      if (next) next();
      else this.active--;
    };
  }
}

/** The detector behind the gate: every detect() holds a slot for its decode and inference. */
export function gateDetector(detector: ObjectDetector, gate: CapacityGate): ObjectDetector {
  return {
    get model(): ModelRef {
      return detector.model;
    },
    labels: () => detector.labels(),
    async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
      const release = await gate.acquire(options.signal);
      try {
        return await detector.detect(image, options);
      } finally {
        release();
      }
    },
  };
}
