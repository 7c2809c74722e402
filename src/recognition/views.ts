/** The public shapes of results (CVResult, BatchCVResult), built from request records. */
import type { Detection, ModelRef } from './detection.js';
import type { RequestRecord, RequestStatus } from './ports.js';

export interface CVResult {
  success: boolean;
  request_id: string;
  /** The sync request's external_id, or the batch's (as sent, or assigned when none was sent). */
  external_id: string;
  status: RequestStatus;
  image_url: string;
  results: Detection[];
  error?: string;
  response_code?: number;
  processing_time_ms?: number;
  model?: ModelRef;
}

export interface BatchImageResult {
  image_url: string;
  request_id: string | null;
  status: 'DONE' | 'FAILED';
  success: boolean;
  error: string | null;
  results: Detection[];
  response_code: number | null;
}

export interface BatchCVResult {
  success: boolean;
  /** The batch's external_id as sent, or the id the service assigned when none was sent. */
  batch_id: string;
  total_images: number;
  results: BatchImageResult[];
}

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
