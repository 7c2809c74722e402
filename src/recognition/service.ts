/**
 * The recognition use case: sync and batch submission, lookup and feedback. It knows the
 * contract's rules (idempotency, charging order, deadlines, ownership, classes) and nothing
 * of HTTP or of the database driver: it talks to ports. Its three concerns live apart:
 * charging.ts (claim, charge, give back), deadline-pipeline.ts (one image against a
 * deadline) and batch-fan-out.ts (many images, bounded).
 */
import { createHash } from 'node:crypto';
import { RequestCharging, type RequestDraft } from './charging.js';
import { fanOutBatch, type BatchInput } from './batch-fan-out.js';
import { DeadlinePipeline, observeOutcome } from './deadline-pipeline.js';
import type { ObjectDetector } from './detection.js';
import { RecognitionRejected } from './errors.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner, IntakeImage } from './image-ports.js';
import type { FeedbackRepository, RequestRecord, RequestRepository } from './ports.js';
import type { Caller, DetectionControls, Logger, RecognitionObserver, Source, SyncImage } from './types.js';
import { toCVResult, type BatchCVResult, type CVResult } from './views.js';

export type { Caller, DetectionControls, Logger, RecognitionObserver, SyncImage } from './types.js';
export { secondsUntilNextMonthUtc } from './charging.js';
export { filterByClasses } from './deadline-pipeline.js';
export { runBounded } from './batch-fan-out.js';

export interface RecognitionSettings {
  syncTimeoutMs: number;
  batchConcurrency: number;
  maxBase64Bytes: number;
}

export interface RecognitionDeps {
  observer?: RecognitionObserver;
  requests: RequestRepository;
  feedback: FeedbackRepository;
  detector: ObjectDetector;
  fetcher: ImageFetcher;
  decodeBase64(input: string, maxEncodedBytes: number): IntakeImage;
  imageStore: ImageStore;
  signer: ImageUrlSigner;
  /** When set (IMAGE_URL_MODE=presigned), a stored image's link is a presigned store link. */
  presignImage?: (requestId: string) => Promise<string>;
  settings: RecognitionSettings;
  logger: Logger;
}

export class RecognitionService {
  private readonly charging: RequestCharging;
  private readonly pipeline: DeadlinePipeline;

  constructor(private readonly deps: RecognitionDeps) {
    this.charging = new RequestCharging(deps);
    this.pipeline = new DeadlinePipeline(deps);
  }

  private async imageUrlOf(r: RequestRecord): Promise<string> {
    if (r.imageStored && this.deps.presignImage) return this.deps.presignImage(r.id);
    if (r.imageStored || r.sourceUrl === null) return this.deps.signer.sign(r.id);
    return r.sourceUrl;
  }

  async view(r: RequestRecord): Promise<CVResult> {
    return toCVResult(r, await this.imageUrlOf(r));
  }

  /**
   * One image, answered in the same call. Idempotent on (key, external_id): a repeat with the
   * same image replays the stored result without charge; while the first runs it is 409; with
   * another image 422; after an ERROR it runs again as a new request. A replay answers the
   * stored result whatever the new request's controls: the fingerprint is the image's alone.
   */
  async submitSync(
    caller: Caller,
    input: { externalId: string; image: SyncImage; controls?: DetectionControls },
    startedAt = Date.now(),
  ): Promise<{ result: CVResult; replayed: boolean }> {
    const deadline = startedAt + this.deps.settings.syncTimeoutMs;
    this.checkClasses(caller, input.controls);
    const { source, fingerprint } = this.intake(input.image);
    const request: RequestDraft = {
      keyId: caller.keyId,
      orgId: caller.orgId,
      kind: 'sync',
      externalId: input.externalId,
      source: source.kind,
      sourceUrl: source.kind === 'url' ? source.url : null,
      imageFingerprint: fingerprint,
    };

    // One statement claims the external_id, charges quota and balance, and writes the row.
    const claim = await this.charging.chargeSync(caller, request);
    if (claim.kind === 'replay') {
      this.deps.observer?.recognition('replay', 'sync');
      return { result: await this.view(claim.record), replayed: true };
    }
    const record = claim.record;

    const outcome = await this.pipeline.run(caller, record, source, deadline, input.controls);
    observeOutcome(this.deps.observer, outcome, 'sync');
    switch (outcome.kind) {
      case 'finished':
        return { result: await this.view(outcome.record), replayed: false };
      case 'refused':
      case 'overloaded':
        // Its row was removed and its charge given back in the same statement.
        throw outcome.error;
      case 'timeout':
        throw new RecognitionRejected('PROCESSING_TIMEOUT', `Processing timed out after ${this.deps.settings.syncTimeoutMs} ms`, { externalId: input.externalId });
      case 'internal':
        throw outcome.error;
    }
  }

  /** 1–10 URLs, each its own request, processed with bounded concurrency; one failure never affects the others. */
  async submitBatch(caller: Caller, input: BatchInput, startedAt = Date.now()): Promise<BatchCVResult> {
    const deadline = startedAt + this.deps.settings.syncTimeoutMs;
    this.checkClasses(caller, input.controls);
    return fanOutBatch(
      {
        charging: this.charging,
        pipeline: this.pipeline,
        fetcher: this.deps.fetcher,
        observer: this.deps.observer,
        concurrency: this.deps.settings.batchConcurrency,
      },
      caller,
      input,
      deadline,
    );
  }

  /** A request of this key; another key's is refused (403), an unknown id is 404. */
  async lookup(caller: Caller, requestId: string): Promise<CVResult> {
    const r = await this.deps.requests.findById(requestId);
    if (r === null) throw new RecognitionRejected('REQUEST_NOT_FOUND', 'Request not found');
    if (r.keyId !== caller.keyId) throw new RecognitionRejected('REQUEST_FORBIDDEN', 'The request belongs to a different API key');
    return await this.view(r);
  }

  /** Rates a request of this key; another key's request is reported as not found (404). */
  async rate(caller: Caller, requestId: string, rating: -1 | 0 | 1): Promise<void> {
    const r = await this.deps.requests.findById(requestId);
    if (r === null || r.keyId !== caller.keyId) throw new RecognitionRejected('REQUEST_NOT_FOUND', 'Request not found');
    const previous = await this.deps.feedback.rate(requestId, caller.keyId, rating);
    // Posting is an upsert a client may repeat: only a new or changed rating is news to the metrics.
    if (previous !== rating) this.deps.observer?.feedback?.(r.model, rating);
  }

  /**
   * A request's classes narrow its key's, never widen them: each must be one the key may see,
   * or for a key with all classes, a label of the model catalog. Checked before anything is
   * written or charged.
   */
  private checkClasses(caller: Caller, controls: DetectionControls | undefined): void {
    const requested = controls?.classes;
    if (requested === undefined) return;
    const all = caller.classes.includes('*');
    const allowed = all ? this.deps.detector.labels() : caller.classes;
    // Empty only while the model (and its catalog) is still loading: the request goes on to
    // fail as the service's unavailability, not as the client's fault.
    if (allowed.length === 0) return;
    const outside = requested.find((c) => !allowed.includes(c));
    if (outside === undefined) return;
    const why = all ? 'is not in the model catalog' : 'is not one of the classes of this API key';
    throw new RecognitionRejected('INVALID_PARAMETERS', `classes: ${JSON.stringify(outside)} ${why}`);
  }

  /**
   * Checks the image before anything is written or charged. Its ImageError (the client's
   * fault: a refused URL, bad base64, an unsupported format, too large) goes out as is; the
   * API translates it, in one place.
   */
  private intake(image: SyncImage): { source: Source; fingerprint: string } {
    if ('url' in image) {
      this.deps.fetcher.validate(image.url);
      return { source: { kind: 'url', url: image.url }, fingerprint: `url:${image.url}` };
    }
    const decoded = this.deps.decodeBase64(image.base64, this.deps.settings.maxBase64Bytes);
    const digest = createHash('sha256').update(decoded.bytes).digest('hex');
    return { source: { kind: 'base64', image: decoded }, fingerprint: `sha256:${digest}` };
  }
}
