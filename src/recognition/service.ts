/**
 * The recognition use case: sync and batch submission, lookup and feedback. It knows the
 * contract's rules (idempotency, charging order, deadlines, ownership, classes) and nothing
 * of HTTP or of the database driver: it talks to ports.
 */
import { createHash } from 'node:crypto';
import { ImageError } from '../images/errors.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner, IntakeImage } from '../images/types.js';
import { InferenceError } from '../inference/backend.js';
import type { KeyLimits, Limits } from '../limits/types.js';
import type { Detection, ObjectDetector } from './detection.js';
import { CapacityExceeded } from './capacity.js';
import { RecognitionRejected, type RejectionCode } from './errors.js';
import type { FeedbackRepository, NewRequest, RequestRecord, RequestRepository } from './ports.js';
import { failedBeforeProcessing, toBatchEntry, toCVResult, type BatchCVResult, type BatchImageResult, type CVResult } from './views.js';

/** The authenticated caller: one API key of one organisation. */
export interface Caller {
  keyId: string;
  orgId: string;
  /** Catalog labels, or ["*"]. Never empty here (the API refuses keys without classes). */
  classes: string[];
  limits: KeyLimits;
}

export interface RecognitionSettings {
  syncTimeoutMs: number;
  batchConcurrency: number;
  maxBase64Bytes: number;
}

export interface Logger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Optional observer of outcomes (metrics); the use case does not know who listens. */
export interface RecognitionObserver {
  recognition(outcome: 'DONE' | 'ERROR' | 'timeout' | 'replay', mode: 'sync' | 'batch'): void;
  batchSize(images: number): void;
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
  limits: Limits;
  settings: RecognitionSettings;
  logger: Logger;
}

export type SyncImage = { url: string } | { base64: string };

type Source = { kind: 'url'; url: string } | { kind: 'base64'; image: IntakeImage };

/** How one image's processing ended. */
type Outcome =
  | { kind: 'finished'; record: RequestRecord }
  /** Refused before processing (400-class); its record was removed and its charge is to be given back. */
  | { kind: 'refused'; code: RejectionCode; message: string; retryAfterSeconds?: number }
  | { kind: 'timeout'; record: RequestRecord | null }
  | { kind: 'internal'; error: unknown; record: RequestRecord | null };

/** ImageError codes that mean "the client sent something unacceptable" rather than "processing failed". */
const CLIENT_IMAGE_CODES = new Set(['INVALID_IMAGE_URL', 'INVALID_IMAGE_BASE64', 'UNSUPPORTED_IMAGE_FORMAT', 'IMAGE_TOO_LARGE']);

const TIMEOUT_MESSAGE = 'processing timed out';

export function secondsUntilNextMonthUtc(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export function filterByClasses(detections: Detection[], classes: string[]): Detection[] {
  if (classes.includes('*')) return detections;
  const allowed = new Set(classes);
  return detections.filter((d) => allowed.has(d.label));
}

export class RecognitionService {
  constructor(private readonly deps: RecognitionDeps) {}

  imageUrlOf = (r: RequestRecord): string => {
    if (r.imageStored || r.sourceUrl === null) return this.deps.signer.sign(r.id);
    return r.sourceUrl;
  };

  view(r: RequestRecord): CVResult {
    return toCVResult(r, this.imageUrlOf);
  }

  /**
   * One image, answered in the same call. Idempotent on (key, external_id): a repeat with the
   * same image replays the stored result without charge; while the first runs it is 409; with
   * another image 422; after an ERROR it runs again as a new request.
   */
  async submitSync(caller: Caller, input: { externalId: string; image: SyncImage }, startedAt = Date.now()): Promise<{ result: CVResult; replayed: boolean }> {
    const deadline = startedAt + this.deps.settings.syncTimeoutMs;
    const { source, fingerprint } = this.intake(input.image);
    const request: NewRequest = {
      keyId: caller.keyId,
      orgId: caller.orgId,
      kind: 'sync',
      externalId: input.externalId,
      source: source.kind,
      sourceUrl: source.kind === 'url' ? source.url : null,
      imageFingerprint: fingerprint,
    };

    let record: RequestRecord | null = null;
    // A holder that ends ERROR between our insert and our read frees the slot: try again.
    for (let attempt = 0; attempt < 3 && record === null; attempt++) {
      const claim = await this.deps.requests.claimSync(request);
      if (claim.claimed) {
        record = claim.record;
        break;
      }
      const existing = claim.existing;
      if (existing === null) continue;
      if (existing.imageFingerprint !== fingerprint) {
        throw new RecognitionRejected('IDEMPOTENCY_KEY_REUSED', 'This external_id was already used with a different image');
      }
      if (existing.status === 'DONE') {
        this.deps.observer?.recognition('replay', 'sync');
        return { result: this.view(existing), replayed: true };
      }
      throw new RecognitionRejected('REQUEST_IN_PROGRESS', 'A request with this external_id is still processing; retry later');
    }
    if (record === null) throw new RecognitionRejected('REQUEST_IN_PROGRESS', 'A request with this external_id is still processing; retry later');

    const period = await this.charge(caller, 1, async () => {
      await this.deps.requests.discard(record.id);
    });

    const outcome = await this.runWithDeadline(caller, record, source, deadline);
    this.observe(outcome, 'sync');
    switch (outcome.kind) {
      case 'finished':
        return { result: this.view(outcome.record), replayed: false };
      case 'refused':
        await this.giveBack(caller, 1, period);
        throw new RecognitionRejected(outcome.code, outcome.message, outcome.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: outcome.retryAfterSeconds });
      case 'timeout':
        throw new RecognitionRejected('PROCESSING_TIMEOUT', `Processing timed out after ${this.deps.settings.syncTimeoutMs} ms`, { externalId: input.externalId });
      case 'internal':
        throw outcome.error;
    }
  }

  /** 1–10 URLs, each its own request, processed with bounded concurrency; one failure never affects the others. */
  async submitBatch(caller: Caller, input: { urls: string[]; externalId: string | null }, startedAt = Date.now()): Promise<BatchCVResult> {
    const deadline = startedAt + this.deps.settings.syncTimeoutMs;
    const n = input.urls.length;
    // URLs refused on sight are FAILED entries and cost nothing: quota and balance are
    // charged for the accepted images only (so one bad URL cannot get the good ones refused).
    const entries: BatchImageResult[] = new Array(n);
    const accepted: Array<{ index: number; url: string }> = [];
    input.urls.forEach((url, index) => {
      try {
        this.deps.fetcher.validate(url);
        accepted.push({ index, url });
      } catch (err) {
        if (!(err instanceof ImageError)) throw err;
        entries[index] = failedBeforeProcessing(url, err.message);
      }
    });
    const charged = accepted.length;
    const period = charged > 0 ? await this.charge(caller, charged, async () => {}) : undefined;
    this.deps.observer?.batchSize(n);

    let records: RequestRecord[];
    try {
      records = await this.deps.requests.createQueued(
        accepted.map(({ url }) => ({
          keyId: caller.keyId,
          orgId: caller.orgId,
          kind: 'batch' as const,
          externalId: input.externalId,
          source: 'url' as const,
          sourceUrl: url,
          imageFingerprint: `url:${url}`,
        })),
      );
    } catch (err) {
      if (charged > 0) await this.giveBack(caller, charged, period);
      throw err;
    }
    let refunds = 0;

    await runBounded(accepted.length, this.deps.settings.batchConcurrency, async (i) => {
      const { index, url } = accepted[i];
      const record = records[i];
      // One image's failure, even an unexpected one, never affects the others.
      const outcome = await this.runWithDeadline(caller, record, { kind: 'url', url }, deadline).catch(
        (error: unknown): Outcome => ({ kind: 'internal', error, record: null }),
      );
      this.observe(outcome, 'batch');
      switch (outcome.kind) {
        case 'finished':
          entries[index] = toBatchEntry(url, outcome.record);
          break;
        case 'refused':
          refunds++;
          entries[index] = outcome.code === 'SERVICE_OVERLOADED' ? { ...failedBeforeProcessing(url, outcome.message), response_code: 503 } : failedBeforeProcessing(url, outcome.message);
          break;
        case 'timeout':
          entries[index] = outcome.record ? toBatchEntry(url, outcome.record) : { ...failedBeforeProcessing(url, TIMEOUT_MESSAGE), request_id: record.id, response_code: 408 };
          break;
        case 'internal':
          entries[index] = { ...failedBeforeProcessing(url, 'internal error'), request_id: record.id, response_code: 500 };
          break;
      }
    });
    if (refunds > 0) await this.giveBack(caller, refunds, period);
    return { success: true, batch_id: input.externalId, total_images: n, results: entries };
  }

  /** A request of this key; another key's is refused (403), an unknown id is 404. */
  async lookup(caller: Caller, requestId: string): Promise<CVResult> {
    const r = await this.deps.requests.findById(requestId);
    if (r === null) throw new RecognitionRejected('REQUEST_NOT_FOUND', 'Request not found');
    if (r.keyId !== caller.keyId) throw new RecognitionRejected('REQUEST_FORBIDDEN', 'The request belongs to a different API key');
    return this.view(r);
  }

  /** Rates a request of this key; another key's request is reported as not found (404). */
  async rate(caller: Caller, requestId: string, rating: -1 | 0 | 1): Promise<void> {
    const r = await this.deps.requests.findById(requestId);
    if (r === null || r.keyId !== caller.keyId) throw new RecognitionRejected('REQUEST_NOT_FOUND', 'Request not found');
    await this.deps.feedback.rate(requestId, caller.keyId, rating);
  }

  // ---- internals

  private observe(outcome: Outcome, mode: 'sync' | 'batch'): void {
    const o = this.deps.observer;
    if (!o) return;
    if (outcome.kind === 'finished') o.recognition(outcome.record.status === 'DONE' ? 'DONE' : 'ERROR', mode);
    else if (outcome.kind === 'timeout') o.recognition('timeout', mode);
    else if (outcome.kind === 'internal') o.recognition('ERROR', mode);
  }

  /** Checks the image before anything is written or charged; throws the 400-class rejections. */
  private intake(image: SyncImage): { source: Source; fingerprint: string } {
    try {
      if ('url' in image) {
        this.deps.fetcher.validate(image.url);
        return { source: { kind: 'url', url: image.url }, fingerprint: `url:${image.url}` };
      }
      const decoded = this.deps.decodeBase64(image.base64, this.deps.settings.maxBase64Bytes);
      const digest = createHash('sha256').update(decoded.bytes).digest('hex');
      return { source: { kind: 'base64', image: decoded }, fingerprint: `sha256:${digest}` };
    } catch (err) {
      if (err instanceof ImageError && CLIENT_IMAGE_CODES.has(err.code)) throw new RecognitionRejected(err.code as RejectionCode, err.message);
      throw err;
    }
  }

  /**
   * Quota, then balance, in the contract's order; undoes what it took when a later step
   * refuses. Returns the quota month charged, so a give-back after midnight UTC on the 1st
   * returns to the month it came from.
   */
  private async charge(caller: Caller, units: number, undo: () => Promise<void>): Promise<string | undefined> {
    let quotaTaken = false;
    let period: string | undefined;
    try {
      const quota = await this.deps.limits.reserveQuota(caller.limits, units);
      if (!quota.allowed) {
        await undo();
        throw new RecognitionRejected('MONTHLY_QUOTA_EXCEEDED', `Monthly quota of ${quota.limit} requests exceeded (used ${quota.used})`, {
          retryAfterSeconds: secondsUntilNextMonthUtc(),
        });
      }
      quotaTaken = true;
      period = quota.period;
      const paid = await this.deps.limits.debitBalance(caller.orgId, units);
      if (!paid) {
        await this.deps.limits.releaseQuota(caller.limits, units, period);
        quotaTaken = false;
        await undo();
        throw new RecognitionRejected('INSUFFICIENT_BALANCE', `Insufficient API calls balance: this call needs ${units}`);
      }
    } catch (err) {
      if (!(err instanceof RecognitionRejected)) {
        if (quotaTaken) await this.deps.limits.releaseQuota(caller.limits, units, period).catch(() => {});
        await undo().catch(() => {});
      }
      throw err;
    }
    return period;
  }

  private async giveBack(caller: Caller, units: number, period: string | undefined): Promise<void> {
    try {
      await this.deps.limits.releaseQuota(caller.limits, units, period);
      await this.deps.limits.refundBalance(caller.orgId, units);
    } catch (err) {
      this.deps.logger.error({ err, keyId: caller.keyId, units }, 'could not give back quota/balance');
    }
  }

  /**
   * Processes one image against an absolute deadline. When the deadline passes first, the
   * record ends ERROR "processing timed out" (guarded: if processing finished in the same
   * instant, its result stands) and the work is aborted.
   */
  private async runWithDeadline(caller: Caller, record: RequestRecord, source: Source, deadline: number): Promise<Outcome> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
    });
    const run = this.process(caller, record, source, deadline, controller.signal).catch(
      (error: unknown): Outcome => ({ kind: 'internal', error, record: null }),
    );
    try {
      const first = await Promise.race([run, timedOut]);
      if (first !== 'timeout' && first.kind !== 'timeout') return first;
      controller.abort(new Error(TIMEOUT_MESSAGE));
      const ended = await this.deps.requests.finishError(record.id, {
        error: TIMEOUT_MESSAGE,
        responseCode: 408,
        processingTimeMs: Date.now() - record.createdAt.getTime(),
      });
      if (!ended) return await run; // it finished (or was refused) in the same moment
      void run.catch(() => {});
      return { kind: 'timeout', record: await this.deps.requests.findById(record.id) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Never throws: every way out is an Outcome, and the record never stays unfinished. */
  private async process(caller: Caller, record: RequestRecord, source: Source, deadline: number, signal: AbortSignal): Promise<Outcome> {
    const t0 = Date.now();
    let stage: 'fetch' | 'store' | 'detect' = 'fetch';
    try {
      if (Date.now() >= deadline) return { kind: 'timeout', record: null };
      const image = source.kind === 'url' ? await this.deps.fetcher.fetch(source.url, { signal }) : source.image;
      if (signal.aborted) return { kind: 'timeout', record: null };
      stage = 'store';
      await this.deps.imageStore.put(record.id, { bytes: image.bytes, mime: image.mime });
      await this.deps.requests.markImageStored(record.id);
      stage = 'detect';
      if (!(await this.deps.requests.markProcessing(record.id))) return { kind: 'timeout', record: null };
      const out = await this.deps.detector.detect(image.bytes, { deadline, signal });
      const results = filterByClasses(out.detections, caller.classes);
      await this.deps.requests.finishDone(record.id, { results, model: out.model, processingTimeMs: Date.now() - t0 });
    } catch (err) {
      if (signal.aborted) return { kind: 'timeout', record: null };
      if (err instanceof CapacityExceeded) {
        // Refused before decoding: nothing processed, nothing kept, the charge given back.
        await this.deps.requests.discard(record.id);
        await this.deps.imageStore.delete(record.id).catch(() => {});
        return { kind: 'refused', code: 'SERVICE_OVERLOADED', message: 'The service is at capacity; retry shortly', retryAfterSeconds: err.retryAfterSeconds };
      }
      if (err instanceof ImageError) {
        // A refused address (after DNS) and an image over the pixel limit are the client's fault:
        // 400, no record, charge given back. Everything else is a processing ERROR.
        const refused = (stage === 'fetch' && err.code === 'INVALID_IMAGE_URL') || (stage === 'detect' && err.code === 'IMAGE_TOO_LARGE');
        if (refused) {
          await this.deps.requests.discard(record.id);
          await this.deps.imageStore.delete(record.id).catch(() => {});
          return { kind: 'refused', code: err.code as RejectionCode, message: err.message };
        }
        await this.deps.requests.finishError(record.id, { error: err.message, responseCode: err.upstreamStatus ?? null, processingTimeMs: Date.now() - t0 });
      } else if (err instanceof InferenceError) {
        await this.deps.requests.finishError(record.id, { error: `inference failed: ${err.message}`, responseCode: err.responseCode, processingTimeMs: Date.now() - t0 });
      } else {
        this.deps.logger.error({ err, requestId: record.id }, 'recognition failed unexpectedly');
        await this.deps.requests
          .finishError(record.id, { error: 'internal error', responseCode: 500, processingTimeMs: Date.now() - t0 })
          .catch((e: unknown) => this.deps.logger.error({ err: e, requestId: record.id }, 'could not mark the request ERROR'));
        return { kind: 'internal', error: err, record: null };
      }
    }
    const final = await this.deps.requests.findById(record.id);
    if (final === null) return { kind: 'internal', error: new Error(`request ${record.id} vanished`), record: null };
    return { kind: 'finished', record: final };
  }
}

/** Runs task(0..count-1) with at most `limit` at a time. */
export async function runBounded(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
