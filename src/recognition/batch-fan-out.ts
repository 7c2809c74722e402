/**
 * Batch fan-out: 1–10 URLs, each its own request, run through the deadline pipeline with
 * bounded concurrency; one image's failure never affects the others. Only accepted images
 * are charged, and one refused before processing is given back with the removal of its row.
 */
import { randomUUID } from 'node:crypto';
import type { RequestCharging } from './charging.js';
import { observeOutcome, TIMEOUT_MESSAGE, type DeadlinePipeline, type Outcome } from './deadline-pipeline.js';
import { ImageError, type ImageFetcher } from './image-ports.js';
import type { Caller, DetectionControls, RecognitionObserver } from './types.js';
import { failedBeforeProcessing, toBatchEntry, type BatchCVResult, type BatchImageResult } from './views.js';

export interface BatchDeps {
  charging: Pick<RequestCharging, 'chargeBatch'>;
  pipeline: Pick<DeadlinePipeline, 'run'>;
  fetcher: Pick<ImageFetcher, 'validate'>;
  observer?: RecognitionObserver;
  concurrency: number;
}

export interface BatchInput {
  urls: string[];
  externalId: string | null;
  /** Applied to every image. */
  controls?: DetectionControls;
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

export async function fanOutBatch(deps: BatchDeps, caller: Caller, input: BatchInput, deadline: number): Promise<BatchCVResult> {
  const n = input.urls.length;
  // batch_id is a string in the contract: the client's external_id, or, when it sent none, an
  // id assigned here. Each image's request carries it as its external_id either way.
  const batchId = input.externalId ?? randomUUID();
  // URLs refused on sight are FAILED entries and cost nothing: quota and balance are
  // charged for the accepted images only (so one bad URL cannot get the good ones refused).
  const entries = new Array<BatchImageResult>(n);
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
  // One statement charges quota and balance for the accepted images and writes their rows,
  // each recording its charge, so a crash or a 5xx refunds it.
  const records = await deps.charging.chargeBatch(
    caller,
    accepted.map(({ url }) => ({
      keyId: caller.keyId,
      orgId: caller.orgId,
      kind: 'batch' as const,
      externalId: batchId,
      source: 'url' as const,
      sourceUrl: url,
      imageFingerprint: `url:${url}`,
    })),
  );
  deps.observer?.batchSize(n);

  await runBounded(accepted.length, deps.concurrency, async (i) => {
    const { index, url } = accepted[i];
    const record = records[i];
    // One image's failure, even an unexpected one, never affects the others.
    const outcome = await deps.pipeline.run(caller, record, { kind: 'url', url }, deadline, input.controls).catch(
      (error: unknown): Outcome => ({ kind: 'internal', error, record: null }),
    );
    observeOutcome(deps.observer, outcome, 'batch');
    switch (outcome.kind) {
      case 'finished':
        entries[index] = toBatchEntry(url, outcome.record);
        break;
      case 'refused':
        entries[index] = failedBeforeProcessing(url, outcome.error.message);
        break;
      case 'overloaded':
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
  return { success: true, batch_id: batchId, total_images: n, results: entries };
}
