/**
 * The wiring of a canary: two detectors, each on its own backend (the stable and the canary
 * model on the same Triton), and the detector the service uses, which sends each request to
 * one of them by the domain's rule (src/recognition/canary.ts).
 *
 * A canary is on trial, so its failures are the rollout's business, not the client's: an
 * inference failure on the canary side is counted there (the side's own metrics, which a
 * rollback decides on) and the request is answered by the stable model while time remains.
 * The canary gets the request's deadline minus a reserve (CANARY_RESERVE_MS), so a slow
 * canary leaves the stable model time to answer; the end of that budget is the canary's
 * timeout, not the request's. Only a failure the stable model would share (the request's own
 * deadline spent, the client gone, an image that does not decode) reaches the client.
 */
import { canarySide, type CanaryRollout, type CanarySide } from '../recognition/canary.js';
import { InferenceError, type DetectionOutcome, type DetectOptions, type ModelRef, type ObjectDetector } from '../recognition/detection.js';
import type { InferenceBackend, InferOptions, ModelMetadata, Tensor } from './backend.js';

export interface CanarySides extends Readonly<Record<CanarySide, ObjectDetector>> {
  /**
   * The stable model answering a request routed to the canary (the canary failed, or too little
   * time was left to try it): the same model as `stable`, counted apart (attempt="fallback") so
   * that the stable side's own outcomes stay comparable with the canary's.
   */
  readonly fallback: ObjectDetector;
}

export interface CanaryRouting {
  /** The canary model, which salts the routing hash. */
  rollout: CanaryRollout;
  /** Percent of requests for the canary, 1..100. */
  weight: number;
  /** Milliseconds of the request's deadline kept for the stable model when the canary is tried. */
  reserveMs: number;
}

export class CanaryDetector implements ObjectDetector {
  constructor(
    private readonly sides: CanarySides,
    private readonly routing: CanaryRouting,
  ) {}

  /** The stable model: the service's model when a request names no side. */
  get model(): ModelRef {
    return this.sides.stable.model;
  }

  /** Both catalogs' labels, stable's order first: a class only the canary knows is still a class a request may ask for. */
  labels(): string[] {
    const labels = this.sides.stable.labels();
    const known = new Set(labels);
    return [...labels, ...this.sides.canary.labels().filter((l) => !known.has(l))];
  }

  /**
   * Without a routing key (only the CLI calls without one) the stable model answers. Every
   * API request has one: a sync request's external_id is required, and a batch without one is
   * given a random UUID as its batch_id (batch-fan-out.ts), so it goes to a random side.
   */
  sideOf(options: DetectOptions): CanarySide {
    return options.routingKey === undefined ? 'stable' : canarySide(options.routingKey, this.routing.rollout, this.routing.weight);
  }

  async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
    if (this.sideOf(options) === 'stable') return this.sides.stable.detect(image, options);
    const budget = options.deadline === undefined ? undefined : options.deadline - this.routing.reserveMs;
    // Reached with no more than the reserve left (a long wait before inference): trying the
    // canary would fail it for a delay not its own, so the stable model answers at once.
    if (budget !== undefined && Date.now() >= budget) return this.sides.fallback.detect(image, options);
    try {
      return await this.sides.canary.detect(image, budget === undefined ? options : { ...options, deadline: budget });
    } catch (err) {
      if (!stableMayAnswer(err, options)) throw err;
      return this.sides.fallback.detect(image, options);
    }
  }
}

/**
 * The canary's inference failed for a reason of its own (its budget's end included), and the
 * request still has time: not cancelled, the client still there, its own deadline ahead.
 */
function stableMayAnswer(err: unknown, options: DetectOptions): boolean {
  if (!(err instanceof InferenceError) || err.code === 'CANCELLED') return false;
  if (options.signal?.aborted) return false;
  return options.deadline === undefined || Date.now() < options.deadline;
}

/**
 * Both backends as one for the composition root, started and closed together. Readiness
 * (/readyz) is the stable model's alone: every request can be answered by it, and a canary
 * that cannot load must not take the API out of rotation. Metadata and direct inference are the
 * stable model's too.
 */
export class BackendPair implements InferenceBackend {
  readonly kind: InferenceBackend['kind'];

  constructor(
    private readonly stable: InferenceBackend,
    private readonly canary: InferenceBackend,
    private readonly canaryName: string,
  ) {
    this.kind = stable.kind;
  }

  async start(): Promise<void> {
    await Promise.all([this.stable.start(), this.canary.start()]);
  }

  metadata(): ModelMetadata {
    return this.stable.metadata();
  }

  ready(): Promise<boolean> {
    return this.stable.ready();
  }

  get lastError(): string | undefined {
    return this.stable.lastError;
  }

  /** The canary side, for /readyz's `canary` check: named there, never a reason to be unready. */
  async canaryState(): Promise<{ ready: boolean; detail: string }> {
    if (await this.canary.ready()) return { ready: true, detail: 'ok' };
    const why = this.canary.lastError;
    return { ready: false, detail: `canary ${this.canaryName} not ready${why === undefined ? '' : `: ${why}`}` };
  }

  infer(inputs: Tensor[], options?: InferOptions): Promise<Map<string, Tensor>> {
    return this.stable.infer(inputs, options);
  }

  async close(): Promise<void> {
    await Promise.all([this.stable.close(), this.canary.close()]);
  }
}
