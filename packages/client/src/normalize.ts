/**
 * One result type from the spec's two sync shapes: CVResult (`request_id`, detections with
 * `label`/`external_id`) and the guides' variant (`idempotency_id`, detections with
 * `class_name`, optional `model_name`, `confidence`, `processing_time_ms`).
 */
import type { BatchImageResult, BatchResult, BoundingBox, Detection, FeedbackResult, RecognitionResult, RequestStatus } from './types.js';

type Json = Record<string, unknown>;

const STATUSES: readonly RequestStatus[] = ['QUEUED', 'PROCESSING', 'DONE', 'ERROR'];

export class UnexpectedResponseError extends Error {
  constructor(what: string, readonly body: unknown) {
    super(`unexpected response from the server: ${what}`);
    this.name = 'UnexpectedResponseError';
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Json, ...names: string[]): string | undefined {
  for (const n of names) if (typeof o[n] === 'string') return o[n];
  return undefined;
}

function num(o: Json, name: string): number | undefined {
  return typeof o[name] === 'number' && Number.isFinite(o[name]) ? (o[name]) : undefined;
}

function box(v: unknown, body: unknown): BoundingBox {
  if (!isObject(v)) throw new UnexpectedResponseError('a detection has no bounding_box', body);
  const b = { x: num(v, 'x'), y: num(v, 'y'), width: num(v, 'width'), height: num(v, 'height') };
  if (b.x === undefined || b.y === undefined || b.width === undefined || b.height === undefined) {
    throw new UnexpectedResponseError('a bounding_box lacks x, y, width or height', body);
  }
  return b as BoundingBox;
}

export function normalizeDetection(v: unknown, body: unknown = v): Detection {
  if (!isObject(v)) throw new UnexpectedResponseError('a detection is not an object', body);
  const label = str(v, 'label', 'class_name');
  if (label === undefined) throw new UnexpectedResponseError('a detection has neither label nor class_name', body);
  const d: Detection = { label, boundingBox: box(v.bounding_box, body) };
  const productId = str(v, 'external_id');
  if (productId !== undefined) d.productId = productId;
  const confidence = num(v, 'confidence');
  if (confidence !== undefined) d.confidence = confidence;
  const modelName = str(v, 'model_name');
  if (modelName !== undefined) d.modelName = modelName;
  return d;
}

function detections(v: unknown, body: unknown): Detection[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new UnexpectedResponseError('results is not an array', body);
  return v.map((d) => normalizeDetection(d, body));
}

export function normalizeResult(body: unknown, replayed = false): RecognitionResult {
  if (!isObject(body)) throw new UnexpectedResponseError('the body is not a JSON object', body);
  const requestId = str(body, 'request_id', 'idempotency_id');
  if (requestId === undefined) throw new UnexpectedResponseError('neither request_id nor idempotency_id', body);
  const status = str(body, 'status') as RequestStatus | undefined;
  if (status === undefined || !STATUSES.includes(status)) throw new UnexpectedResponseError(`unknown status ${String(body.status)}`, body);
  const r: RecognitionResult = {
    requestId,
    externalId: str(body, 'external_id') ?? '',
    status,
    // The guides' shape has no `success`: DONE means it worked.
    success: typeof body.success === 'boolean' ? body.success : status === 'DONE',
    detections: detections(body.results, body),
    replayed,
  };
  const imageUrl = str(body, 'image_url');
  if (imageUrl !== undefined) r.imageUrl = imageUrl;
  const error = str(body, 'error');
  if (error !== undefined) r.error = error;
  const responseCode = num(body, 'response_code');
  if (responseCode !== undefined) r.responseCode = responseCode;
  const ms = num(body, 'processing_time_ms');
  if (ms !== undefined) r.processingTimeMs = ms;
  if (isObject(body.model) && typeof body.model.name === 'string') {
    r.model = { name: body.model.name, ...(typeof body.model.version === 'string' ? { version: body.model.version } : {}) };
  }
  return r;
}

export function normalizeBatch(body: unknown): BatchResult {
  if (!isObject(body) || !Array.isArray(body.results)) throw new UnexpectedResponseError('a batch answer without results', body);
  const results = body.results.map((e): BatchImageResult => {
    if (!isObject(e)) throw new UnexpectedResponseError('a batch entry is not an object', body);
    const status = e.status === 'DONE' ? 'DONE' : 'FAILED';
    const entry: BatchImageResult = {
      imageUrl: str(e, 'image_url') ?? '',
      requestId: str(e, 'request_id', 'idempotency_id') ?? null,
      status,
      success: typeof e.success === 'boolean' ? e.success : status === 'DONE',
      detections: detections(e.results, body),
    };
    const error = str(e, 'error');
    if (error !== undefined) entry.error = error;
    const code = num(e, 'response_code');
    if (code !== undefined) entry.responseCode = code;
    return entry;
  });
  const batch: BatchResult = {
    success: typeof body.success === 'boolean' ? body.success : true,
    totalImages: num(body, 'total_images') ?? results.length,
    results,
  };
  const batchId = str(body, 'batch_id');
  if (batchId !== undefined) batch.batchId = batchId;
  return batch;
}

export function normalizeFeedback(body: unknown): FeedbackResult {
  if (!isObject(body)) throw new UnexpectedResponseError('the body is not a JSON object', body);
  const requestId = str(body, 'request_id');
  const rating = num(body, 'rating');
  if (requestId === undefined || (rating !== -1 && rating !== 0 && rating !== 1)) {
    throw new UnexpectedResponseError('feedback answer without request_id or rating', body);
  }
  return { requestId, rating: rating, status: str(body, 'status') ?? 'success', message: str(body, 'message') ?? '' };
}
