/**
 * Batch fan-out: 1–10 URLs, each its own request, run through the deadline pipeline with
 * bounded concurrency; one image's failure never affects the others. Only accepted images
 * are charged, and refused ones are given back after the run.
 */
import { ImageError } from '../images/errors.js';
import type { ImageFetcher } from '../images/types.js';
import type { Admission } from './admission.js';
import { observeOutcome, TIMEOUT_MESSAGE, type DeadlinePipeline, type Outcome } from './deadline-pipeline.js';
import type { RequestRecord, RequestRepository } from './ports.js';
import type { Caller, RecognitionObserver } from './types.js';
import { failedBeforeProcessing, toBatchEntry, type BatchCVResult, type BatchImageResult } from './views.js';

export interface BatchDeps {
  admission: Pick<Admission, 'charge' | 'giveBack'>;
  pipeline: Pick<DeadlinePipeline, 'run'>;
  requests: Pick<RequestRepository, 'createQueued'>;
  fetcher: Pick<ImageFetcher, 'validate'>;
  observer?: RecognitionObserver;
  concurrency: number;
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

export async function fanOutBatch(deps: BatchDeps, caller: Caller, input: { urls: string[]; externalId: string | null }, deadline: number): Promise<BatchCVResult> {
  const n = input.urls.length;
  // URLs refused on sight are FAILED entries and cost nothing: quota and balance are
  // charged for the accepted images only (so one bad URL cannot get the good ones refused).
  const entries: BatchImageResult[] = new Array(n);
  const accepted: Array<{ index: number; url: string }> = [];
  input.urls.forEach((url, index) => {
    try {
      deps.fetcher.validate(url);
      accepted.push({ index, url });
    } catch (err) {
      if (!(err instanceof ImageError)) throw err;
      entries[index] = failedBeforeProcessing(url, err.message);
    }
  });
  const charged = accepted.length;
  const period = charged > 0 ? await deps.admission.charge(caller, charged, async () => {}) : undefined;
  deps.observer?.batchSize(n);

  let records: RequestRecord[];
  try {
    records = await deps.requests.createQueued(
      accepted.map(({ url }) => ({
        keyId: caller.keyId,
        orgId: caller.orgId,
        kind: 'batch' as const,
        externalId: input.externalId,
        source: 'url' as const,
        sourceUrl: url,
        imageFingerprint: `url:${url}`,
        // Charged before the rows exist: each row records its unit, so a crash or a 5xx refunds it.
        chargeMonth: period ?? null,
      })),
    );
  } catch (err) {
    if (charged > 0) await deps.admission.giveBack(caller, charged, period);
    throw err;
  }
  let refunds = 0;

  await runBounded(accepted.length, deps.concurrency, async (i) => {
    const { index, url } = accepted[i];
    const record = records[i];
    // One image's failure, even an unexpected one, never affects the others.
    const outcome = await deps.pipeline.run(caller, record, { kind: 'url', url }, deadline).catch(
      (error: unknown): Outcome => ({ kind: 'internal', error, record: null }),
    );
    observeOutcome(deps.observer, outcome, 'batch');
    switch (outcome.kind) {
      case 'finished':
        entries[index] = toBatchEntry(url, outcome.record);
        break;
      case 'refused':
        refunds++;
        entries[index] = failedBeforeProcessing(url, outcome.error.message);
        break;
      case 'overloaded':
        refunds++;
        entries[index] = { ...failedBeforeProcessing(url, 'the service is at capacity; retry shortly'), response_code: 503 };
        break;
      case 'timeout':
        entries[index] = outcome.record ? toBatchEntry(url, outcome.record) : { ...failedBeforeProcessing(url, TIMEOUT_MESSAGE), request_id: record.id, response_code: 408 };
        break;
      case 'internal':
        entries[index] = { ...failedBeforeProcessing(url, 'internal error'), request_id: record.id, response_code: 500 };
        break;
    }
  });
  if (refunds > 0) await deps.admission.giveBack(caller, refunds, period);
  return { success: true, batch_id: input.externalId, total_images: n, results: entries };
}
