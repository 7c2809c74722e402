/**
 * The wiring of a canary: two detectors, each on its own backend (the stable and the canary
 * model on the same Triton), and the detector the service uses, which sends each request to
 * one of them by the domain's rule (src/recognition/canary.ts).
 *
 * A canary is on trial, so its failures are the rollout's business, not the client's: an
 * inference failure on the canary side is counted there (the side's own metrics, which a
 * rollback decides on) and the request is answered by the stable model while time remains.
 * Only a failure the stable model would share (the deadline spent, the client gone, an image
 * that does not decode) reaches the client.
 */
import { canarySide, type CanarySide } from '../recognition/canary.js';
import { InferenceError, type DetectionOutcome, type DetectOptions, type ModelRef, type ObjectDetector } from '../recognition/detection.js';
import type { InferenceBackend, InferOptions, ModelMetadata, Tensor } from './backend.js';

export class CanaryDetector implements ObjectDetector {
  /** `weight`: percent of requests for the canary, 1..100. */
  constructor(
    private readonly sides: Readonly<Record<CanarySide, ObjectDetector>>,
    readonly weight: number,
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

  /** Without a routing key (the CLI, a batch row without an id) the stable model answers. */
  sideOf(options: DetectOptions): CanarySide {
    return options.routingKey === undefined ? 'stable' : canarySide(options.routingKey, this.weight);
  }

  async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
    if (this.sideOf(options) === 'stable') return this.sides.stable.detect(image, options);
    try {
      return await this.sides.canary.detect(image, options);
    } catch (err) {
      if (!stableMayAnswer(err, options)) throw err;
      return this.sides.stable.detect(image, options);
    }
  }
}

/** A canary's inference failed for a reason of its own, and the request still has time. */
function stableMayAnswer(err: unknown, options: DetectOptions): boolean {
  if (!(err instanceof InferenceError) || err.code === 'DEADLINE_EXCEEDED' || err.code === 'CANCELLED') return false;
  if (options.signal?.aborted) return false;
  return options.deadline === undefined || Date.now() < options.deadline;
}

/** A backend with the optional unready reason BackgroundStart keeps. */
type Side = InferenceBackend & { readonly lastError?: string };

/**
 * Both backends as one for the composition root, started and closed together. Readiness
 * (/readyz) is the stable model's: every request can be answered by it, and a canary that
 * cannot load must not take the API out of rotation. Metadata and direct inference are the
 * stable model's too.
 */
export class BackendPair implements InferenceBackend {
  readonly kind: InferenceBackend['kind'];

  constructor(
    private readonly stable: Side,
    private readonly canary: Side,
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
