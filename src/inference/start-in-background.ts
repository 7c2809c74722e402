/**
 * Starting the inference backend without holding up the HTTP server: the API listens at once
 * and /readyz stays 503 ("model not ready") until the backend has started, so a pod whose
 * Triton is still loading a model for 15 minutes is unready, never crash-looping. A start that
 * runs out of time is retried until it succeeds or the backend is closed.
 *
 * The catalog is read the same way when it lives in the model repository (an s3:// catalog):
 * until it is read, and while it does not fit the served model, the API stays unready with
 * the reason and reads it again with backoff, so a catalog uploaded or fixed later is taken.
 */
import { backoffDelay } from '../backoff.js';
import type { Catalog } from '../models/catalog.js';
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from '../recognition/detection.js';
import { InferenceError, type InferenceBackend, type InferOptions, type ModelMetadata, type Tensor } from './backend.js';

export interface CatalogLoader {
  load(): Promise<Catalog>;
  /** Read again when it does not fit the model (it may be replaced while we run). */
  refreshable: boolean;
}

export interface RetryDelays {
  /** Between backend start attempts, and the first catalog retry. */
  retryMs: number;
  /** Catalog retries back off up to this. */
  maxRetryMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

export class BackgroundStart implements InferenceBackend {
  readonly kind: InferenceBackend['kind'];
  private detector: ObjectDetector | undefined;
  private catalog: Catalog | undefined;
  private closed = false;
  /** Why the backend is not started yet (the last failure), for /readyz. */
  lastError: string | undefined;

  constructor(
    private readonly inner: InferenceBackend,
    private readonly build: (started: InferenceBackend, catalog: Catalog) => ObjectDetector,
    private readonly catalogs: CatalogLoader,
    private readonly onError: (err: unknown) => void,
    private readonly delays: RetryDelays = { retryMs: 2_000, maxRetryMs: 30_000 },
  ) {
    this.kind = inner.kind;
  }

  start(): Promise<void> {
    void this.loop();
    return Promise.resolve();
  }

  /** Logged when the reason changes, not every retry. */
  private fail(err: unknown): void {
    const message = (err as Error).message;
    if (!this.closed && message !== this.lastError) this.onError(err);
    this.lastError = message;
  }

  private async loop(): Promise<void> {
    let catalog: Catalog | undefined;
    const catalogBackoff = { baseMs: this.delays.retryMs, capMs: this.delays.maxRetryMs };
    let catalogFailures = 0;
    let backendStarted = false;
    while (!this.closed) {
      if (catalog === undefined) {
        try {
          catalog = await this.catalogs.load();
          this.catalog = catalog;
        } catch (err) {
          this.fail(err);
          await sleep(backoffDelay(catalogFailures++, catalogBackoff));
          continue;
        }
      }
      // Closed while the catalog was read: do not start a backend nobody will close.
      if (this.closed) return;
      if (!backendStarted) {
        try {
          await this.inner.start();
          backendStarted = true;
        } catch (err) {
          this.fail(err);
          await sleep(this.delays.retryMs);
          continue;
        }
      }
      try {
        this.detector = this.build(this.inner, catalog);
        this.lastError = undefined;
        return;
      } catch (err) {
        // The started model does not fit the catalog. A file catalog does not change while
        // this process runs: unready with the reason (for /readyz) until redeployed.
        this.fail(err);
        if (!this.catalogs.refreshable) return;
        await sleep(backoffDelay(catalogFailures++, catalogBackoff));
        catalog = undefined;
      }
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

  /**
   * The detector the service uses: it answers UNAVAILABLE until the backend has started.
   * `expected` names the model until the catalog is read.
   */
  asDetector(expected: ModelRef): ObjectDetector {
    // Arrow functions and a getter bound to this object: the detector is read at call time.
    const current = () => this.detector;
    const catalog = () => this.catalog;
    const lastError = () => this.lastError;
    return {
      get model(): ModelRef {
        return current()?.model ?? { ...(catalog()?.model ?? expected) };
      },
      labels: () => current()?.labels() ?? [...(catalog()?.classes ?? [])].sort((a, b) => a.index - b.index).map((c) => c.label),
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
