/** The public shapes of results (CVResult, BatchCVResult), built from request records. */
import type { BatchCVResult, BatchImageResult, CVResult } from '../contract/public-api.js';
import type { RequestRecord } from './ports.js';

export type { BatchCVResult, BatchImageResult, CVResult };

/** DONE ⇒ success and results; ERROR ⇒ error text; other states ⇒ neither. */
export function toCVResult(r: RequestRecord, imageUrl: string): CVResult {
  const out: CVResult = {
    success: r.status === 'DONE',
    request_id: r.id,
    // Only batch images stored before batches were given an id when the client sent none
    // have no external_id: the contract types it a string, so they answer an empty one.
    external_id: r.externalId ?? '',
    status: r.status,
    image_url: imageUrl,
    results: r.status === 'DONE' ? r.results : [],
  };
  if (r.status === 'ERROR') out.error = r.error ?? 'processing failed';
  if (r.responseCode !== null) out.response_code = r.responseCode;
  if (r.processingTimeMs !== null) out.processing_time_ms = r.processingTimeMs;
  if (r.model !== null) out.model = r.model;
  return out;
}

export function toBatchEntry(submittedUrl: string, r: RequestRecord): BatchImageResult {
  const done = r.status === 'DONE';
  return {
    image_url: submittedUrl,
    request_id: r.id,
    status: done ? 'DONE' : 'FAILED',
    success: done,
    error: done ? null : (r.error ?? 'processing failed'),
    results: done ? r.results : [],
    response_code: r.responseCode,
  };
}

export function failedBeforeProcessing(submittedUrl: string, error: string): BatchImageResult {
  return { image_url: submittedUrl, request_id: null, status: 'FAILED', success: false, error, results: [], response_code: null };
}
