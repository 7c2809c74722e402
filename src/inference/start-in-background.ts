/**
 * Starting the inference backend without holding up the HTTP server: the API listens at once
 * and /readyz stays 503 ("model not ready") until the backend has started, so a pod whose
 * Triton is still loading a model for 15 minutes is unready, never crash-looping. A start that
 * runs out of time is retried until it succeeds or the backend is closed.
 */
import type { Catalog } from '../models/catalog.js';
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from '../recognition/detection.js';
import { InferenceError, type InferenceBackend, type InferOptions, type ModelMetadata, type Tensor } from './backend.js';

export class BackgroundStart implements InferenceBackend {
  readonly kind: InferenceBackend['kind'];
  private detector: ObjectDetector | undefined;
  private closed = false;
  /** Why the backend is not started yet (the last failure), for /readyz. */
  lastError: string | undefined;

  constructor(
    private readonly inner: InferenceBackend,
    private readonly build: (started: InferenceBackend) => ObjectDetector,
    private readonly onError: (err: unknown) => void,
    private readonly retryMs = 2_000,
  ) {
    this.kind = inner.kind;
  }

  start(): Promise<void> {
    void this.loop();
    return Promise.resolve();
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      try {
        await this.inner.start();
      } catch (err) {
        const message = (err as Error).message;
        // Logged when the reason changes, not every retry.
        if (!this.closed && message !== this.lastError) this.onError(err);
        this.lastError = message;
        await new Promise((r) => setTimeout(r, this.retryMs).unref());
        continue;
      }
      try {
        this.detector = this.build(this.inner);
        this.lastError = undefined;
      } catch (err) {
        // The started model does not fit the catalog: neither changes while this process
        // runs, so it stays unready with the reason (for /readyz) until it is redeployed.
        this.onError(err);
        this.lastError = (err as Error).message;
      }
      return;
    }
  }

  get started(): boolean {
    return this.detector !== undefined;
  }

  metadata(): ModelMetadata {
    return this.inner.metadata();
  }

  async ready(): Promise<boolean> {
    return this.started && (await this.inner.ready());
  }

  infer(inputs: Tensor[], options?: InferOptions): Promise<Map<string, Tensor>> {
    return this.inner.infer(inputs, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.inner.close();
  }

  /** The detector the service uses: it answers UNAVAILABLE until the backend has started. */
  asDetector(catalog: Catalog): ObjectDetector {
    // Arrow functions and a getter bound to this object: the detector is read at call time.
    const current = () => this.detector;
    const lastError = () => this.lastError;
    return {
      get model(): ModelRef {
        return current()?.model ?? { ...catalog.model };
      },
      labels: () => [...catalog.classes].sort((a, b) => a.index - b.index).map((c) => c.label),
      detect(image: Uint8Array, options?: DetectOptions): Promise<DetectionOutcome> {
        const detector = current();
        if (!detector) {
          const reason = lastError();
          return Promise.reject(new InferenceError('UNAVAILABLE', `the model is not loaded yet${reason ? ` (${reason})` : ''}`));
        }
        return detector.detect(image, options);
      },
    };
  }
}
