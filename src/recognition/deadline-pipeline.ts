/**
 * The deadline pipeline: one image through fetch → store → detect → finish, against an
 * absolute deadline. Every way out is an Outcome and the record never stays unfinished.
 */
import { backoffDelay } from '../backoff.js';
import { deadlineSignal, raceSignal } from '../deadline.js';
import { CapacityExceeded } from './capacity.js';
import { InferenceError, type Detection, type ObjectDetector } from './detection.js';
import { ImageError, ImageStoreError, type ImageFetcher, type ImageStore } from './image-ports.js';
import type { RequestRecord, RequestRepository } from './ports.js';
import type { Caller, DetectionControls, Logger, RecognitionObserver, Source } from './types.js';

export interface PipelineDeps {
  requests: Pick<RequestRepository, 'markProcessing' | 'finishDone' | 'finishError' | 'failUndelivered' | 'discard' | 'findById'>;
  detector: Pick<ObjectDetector, 'detect'>;
  fetcher: Pick<ImageFetcher, 'fetch'>;
  imageStore: Pick<ImageStore, 'put' | 'delete'>;
  logger: Logger;
}

/** How one image's processing ended. */
export type Outcome =
  | { kind: 'finished'; record: RequestRecord }
  /** Refused before processing (the client's fault, 400-class); its record was removed, its charge given back. */
  | { kind: 'refused'; error: ImageError }
  /** No decode/inference slot (503 with Retry-After); its record was removed, its charge given back. */
  | { kind: 'overloaded'; error: CapacityExceeded }
  | { kind: 'timeout'; record: RequestRecord | null }
  | { kind: 'internal'; error: unknown; record: RequestRecord | null };

export const TIMEOUT_MESSAGE = 'processing timed out';

/** How long a request the client was told failed keeps being corrected to ERROR while the database is away. */
const COMPENSATE_FOR_MS = 10 * 60_000;

export function filterByClasses(detections: Detection[], classes: string[]): Detection[] {
  if (classes.includes('*')) return detections;
  const allowed = new Set(classes);
  return detections.filter((d) => allowed.has(d.label));
}

/**
 * The detections a request asked for: the key's classes, then the request's own classes and
 * minimum confidence, then the top max_results by confidence (a stable sort keeps the
 * detector's order among ties).
 */
export function applyControls(detections: Detection[], keyClasses: string[], controls: DetectionControls): Detection[] {
  const { classes, minConfidence, maxResults } = controls;
  let out = filterByClasses(detections, keyClasses);
  if (classes !== undefined) out = filterByClasses(out, classes);
  if (minConfidence !== undefined) out = out.filter((d) => d.confidence >= minConfidence);
  if (maxResults !== undefined && out.length > maxResults) out = [...out].sort((a, b) => b.confidence - a.confidence).slice(0, maxResults);
  return out;
}

/** Reports an outcome to the metrics observer, if any. */
export function observeOutcome(observer: RecognitionObserver | undefined, outcome: Outcome, mode: 'sync' | 'batch'): void {
  if (!observer) return;
  if (outcome.kind === 'finished') observer.recognition(outcome.record.status === 'DONE' ? 'DONE' : 'ERROR', mode);
  else if (outcome.kind === 'timeout') observer.recognition('timeout', mode);
  else if (outcome.kind === 'internal') observer.recognition('ERROR', mode);
}

export class DeadlinePipeline {
  constructor(private readonly deps: PipelineDeps) {}

  /**
   * Processes one image against an absolute deadline. When the deadline passes first, the
   * record ends ERROR "processing timed out" (guarded: if processing finished in the same
   * instant, its result stands) and the work is aborted.
   */
  async run(caller: Caller, record: RequestRecord, source: Source, deadline: number, controls: DetectionControls = {}): Promise<Outcome> {
    const signal = deadlineSignal(deadline);
    const run = this.process(caller, record, source, deadline, signal, controls).catch(async (error: unknown): Promise<Outcome> => {
      // Even recording the failure failed (the database is away): the client gets a 5xx.
      await this.failUndelivered(record.id, 'internal error');
      return { kind: 'internal', error, record: null };
    });
    // `run` never rejects: a rejection here is the deadline.
    const first = await raceSignal(run, signal).catch((): 'timeout' => 'timeout');
    if (first !== 'timeout' && first.kind !== 'timeout') return first;
    // The client is told 408: the request ends ERROR and its charge is given back.
    const ended = await this.deps.requests.finishError(record.id, {
      error: TIMEOUT_MESSAGE,
      responseCode: 408,
      processingTimeMs: Date.now() - record.createdAt.getTime(),
      refund: true,
    });
    if (!ended) return await run; // it finished (or was refused) in the same moment
    return { kind: 'timeout', record: await this.deps.requests.findById(record.id) };
  }

  /**
   * The client is (or will be) told this request failed: it must not stay, or end, DONE.
   * Ends it ERROR with its charge given back; while the database is away, keeps retrying in
   * the background (the sweep cannot correct a DONE row). Resolves after the first try.
   */
  async failUndelivered(requestId: string, error: string): Promise<void> {
    const { requests, logger } = this.deps;
    const until = Date.now() + COMPENSATE_FOR_MS;
    const attempt = async (): Promise<boolean> =>
      requests.failUndelivered(requestId, error, 500).then(
        () => true,
        () => false,
      );
    if (await attempt()) return;
    let retries = 0;
    const again = (): void => {
      const wait = backoffDelay(retries++, { baseMs: 500, capMs: 30_000 });
      if (Date.now() + wait > until) return logger.error({ requestId }, 'could not record a failed request as ERROR; giving up');
      setTimeout(() => void attempt().then((ok) => ok || again()), wait).unref();
    };
    again();
  }

  /** Never throws: every way out is an Outcome, and the record never stays unfinished. */
  private async process(caller: Caller, record: RequestRecord, source: Source, deadline: number, signal: AbortSignal, controls: DetectionControls): Promise<Outcome> {
    const { requests, logger } = this.deps;
    const t0 = Date.now();
    let stage: 'fetch' | 'store' | 'detect' | 'finish' = 'fetch';
    try {
      if (Date.now() >= deadline) return { kind: 'timeout', record: null };
      const image = source.kind === 'url' ? await this.deps.fetcher.fetch(source.url, { signal }) : source.image;
      if (signal.aborted) return { kind: 'timeout', record: null };
      stage = 'store';
      await this.deps.imageStore.put(record.id, { bytes: image.bytes, mime: image.mime }).catch((err: unknown) => {
        // No image, no result: a DONE row must never point at an image that was not kept.
        throw new ImageStoreError(err);
      });
      stage = 'detect';
      if (signal.aborted) return { kind: 'timeout', record: null };
      // QUEUED → PROCESSING as the image is handed to inference (a sync request whose image
      // came in the body was written PROCESSING at admission: nothing to mark). The
      // write runs alongside the inference rather than before it, so the answer waits for no
      // extra round trip; the ending write waits for it, so it never lands after DONE. If the
      // request ended meanwhile (timed out, swept), the guarded write changes nothing and the
      // guarded ending below finds it ended too.
      const startedAt = record.startedAt ?? new Date();
      const marking = record.status === 'QUEUED' ? requests.markProcessing(record.id) : true;
      const [out] = await Promise.all([this.deps.detector.detect(image.bytes, { deadline, signal, routingKey: record.externalId ?? undefined }), marking]);
      const results = applyControls(out.detections, caller.classes, controls);
      stage = 'finish';
      const processingTimeMs = Date.now() - t0;
      if (await requests.finishDone(record.id, { results, model: out.model, processingTimeMs })) {
        // The answer is built from what was written: no read that could fail after DONE.
        return {
          kind: 'finished',
          record: { ...record, status: 'DONE', imageStored: true, results, error: null, responseCode: 200, model: out.model, processingTimeMs: Math.round(processingTimeMs), startedAt, finishedAt: new Date() },
        };
      }
    } catch (err) {
      // The backend was handed this same deadline: its own timer (gRPC's) may fire a moment
      // before ours, and that is still the request's time running out, a 408.
      if (signal.aborted || (err instanceof InferenceError && err.code === 'DEADLINE_EXCEEDED')) return { kind: 'timeout', record: null };
      if (err instanceof CapacityExceeded) {
        // Refused before decoding: nothing processed, nothing kept, the charge given back.
        await requests.discard(record.id);
        await this.deps.imageStore.delete(record.id).catch(() => {});
        return { kind: 'overloaded', error: err };
      }
      if (err instanceof ImageError) {
        // A refused address (after DNS) and an image over the pixel limit are the client's fault:
        // 400, no record, charge given back. Everything else is a processing ERROR.
        const refused = (stage === 'fetch' && err.code === 'INVALID_IMAGE_URL') || (stage === 'detect' && err.code === 'IMAGE_TOO_LARGE');
        if (refused) {
          await requests.discard(record.id);
          await this.deps.imageStore.delete(record.id).catch(() => {});
          return { kind: 'refused', error: err };
        }
        // The client's image could not be used (download failed, undecodable): processed, charged.
        await requests.finishError(record.id, {
          error: err.message,
          responseCode: err.upstreamStatus ?? null,
          processingTimeMs: Date.now() - t0,
          imageStored: stage !== 'fetch',
        });
      } else if (err instanceof ImageStoreError) {
        logger.warn({ err: err.cause, requestId: record.id }, 'image store write failed');
        await requests.finishError(record.id, { error: err.message, responseCode: 503, processingTimeMs: Date.now() - t0, imageStored: false });
      } else if (err instanceof InferenceError) {
        // The service's own backend failed: the request ends ERROR and is not charged.
        await requests.finishError(record.id, { error: `inference failed: ${err.message}`, responseCode: err.responseCode, processingTimeMs: Date.now() - t0, refund: true });
      } else {
        // Unexpected, or the database failed (perhaps after DONE was written, unconfirmed):
        // the client gets a 5xx, so the request must end ERROR, refunded.
        if (stage !== 'finish') logger.error({ err, requestId: record.id }, 'recognition failed unexpectedly');
        await this.failUndelivered(record.id, stage === 'finish' ? 'internal error: the result could not be recorded' : 'internal error');
        return { kind: 'internal', error: err, record: null };
      }
    }
    const final = await requests.findById(record.id);
    if (final === null) return { kind: 'internal', error: new Error(`request ${record.id} vanished`), record: null };
    return { kind: 'finished', record: final };
  }
}
