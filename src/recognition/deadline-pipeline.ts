/**
 * The deadline pipeline: one image through fetch → store → detect → finish, against an
 * absolute deadline. Every way out is an Outcome and the record never stays unfinished.
 */
import { deadlineSignal, raceSignal } from '../deadline.js';
import { ImageError } from '../images/errors.js';
import type { ImageFetcher, ImageStore } from '../images/types.js';
import { InferenceError } from '../inference/backend.js';
import type { Detection, ObjectDetector } from './detection.js';
import type { RequestRecord, RequestRepository } from './ports.js';
import type { Caller, Logger, RecognitionObserver, Source } from './types.js';

export interface PipelineDeps {
  requests: Pick<RequestRepository, 'markImageStored' | 'markProcessing' | 'finishDone' | 'finishError' | 'discard' | 'findById'>;
  detector: Pick<ObjectDetector, 'detect'>;
  fetcher: Pick<ImageFetcher, 'fetch'>;
  imageStore: Pick<ImageStore, 'put' | 'delete'>;
  logger: Logger;
}

/** How one image's processing ended. */
export type Outcome =
  | { kind: 'finished'; record: RequestRecord }
  /** Refused before processing (the client's fault, 400-class); its record was removed and its charge is to be given back. */
  | { kind: 'refused'; error: ImageError }
  | { kind: 'timeout'; record: RequestRecord | null }
  | { kind: 'internal'; error: unknown; record: RequestRecord | null };

export const TIMEOUT_MESSAGE = 'processing timed out';

export function filterByClasses(detections: Detection[], classes: string[]): Detection[] {
  if (classes.includes('*')) return detections;
  const allowed = new Set(classes);
  return detections.filter((d) => allowed.has(d.label));
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
  async run(caller: Caller, record: RequestRecord, source: Source, deadline: number): Promise<Outcome> {
    const signal = deadlineSignal(deadline);
    const run = this.process(caller, record, source, deadline, signal).catch(
      (error: unknown): Outcome => ({ kind: 'internal', error, record: null }),
    );
    // `run` never rejects: a rejection here is the deadline.
    const first = await raceSignal(run, signal).catch((): 'timeout' => 'timeout');
    if (first !== 'timeout' && first.kind !== 'timeout') return first;
    const ended = await this.deps.requests.finishError(record.id, {
      error: TIMEOUT_MESSAGE,
      responseCode: 408,
      processingTimeMs: Date.now() - record.createdAt.getTime(),
    });
    if (!ended) return await run; // it finished (or was refused) in the same moment
    return { kind: 'timeout', record: await this.deps.requests.findById(record.id) };
  }

  /** Never throws: every way out is an Outcome, and the record never stays unfinished. */
  private async process(caller: Caller, record: RequestRecord, source: Source, deadline: number, signal: AbortSignal): Promise<Outcome> {
    const { requests, logger } = this.deps;
    const t0 = Date.now();
    let stage: 'fetch' | 'store' | 'detect' = 'fetch';
    try {
      if (Date.now() >= deadline) return { kind: 'timeout', record: null };
      const image = source.kind === 'url' ? await this.deps.fetcher.fetch(source.url, { signal }) : source.image;
      if (signal.aborted) return { kind: 'timeout', record: null };
      stage = 'store';
      await this.deps.imageStore.put(record.id, { bytes: image.bytes, mime: image.mime });
      await requests.markImageStored(record.id);
      stage = 'detect';
      if (!(await requests.markProcessing(record.id))) return { kind: 'timeout', record: null };
      const out = await this.deps.detector.detect(image.bytes, { deadline, signal });
      const results = filterByClasses(out.detections, caller.classes);
      await requests.finishDone(record.id, { results, model: out.model, processingTimeMs: Date.now() - t0 });
    } catch (err) {
      if (signal.aborted) return { kind: 'timeout', record: null };
      if (err instanceof ImageError) {
        // A refused address (after DNS) and an image over the pixel limit are the client's fault:
        // 400, no record, charge given back. Everything else is a processing ERROR.
        const refused = (stage === 'fetch' && err.code === 'INVALID_IMAGE_URL') || (stage === 'detect' && err.code === 'IMAGE_TOO_LARGE');
        if (refused) {
          await requests.discard(record.id);
          await this.deps.imageStore.delete(record.id).catch(() => {});
          return { kind: 'refused', error: err };
        }
        await requests.finishError(record.id, { error: err.message, responseCode: err.upstreamStatus ?? null, processingTimeMs: Date.now() - t0 });
      } else if (err instanceof InferenceError) {
        await requests.finishError(record.id, { error: `inference failed: ${err.message}`, responseCode: err.responseCode, processingTimeMs: Date.now() - t0 });
      } else {
        logger.error({ err, requestId: record.id }, 'recognition failed unexpectedly');
        await requests
          .finishError(record.id, { error: 'internal error', responseCode: 500, processingTimeMs: Date.now() - t0 })
          .catch((e: unknown) => logger.error({ err: e, requestId: record.id }, 'could not mark the request ERROR'));
        return { kind: 'internal', error: err, record: null };
      }
    }
    const final = await requests.findById(record.id);
    if (final === null) return { kind: 'internal', error: new Error(`request ${record.id} vanished`), record: null };
    return { kind: 'finished', record: final };
  }
}
