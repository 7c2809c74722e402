/**
 * One result type from the spec's two sync shapes: CVResult (`request_id`, detections with
 * `label`/`external_id`), read through the types generated from /openapi.json, and the
 * guides' variant (`idempotency_id`, detections with `class_name`, optional `model_name`,
 * `confidence`, `processing_time_ms`), which the document does not have and is typed below
 * by hand. Every field is checked at run time: the body comes off the network.
 */
import type { BatchImageResult, BatchResult, BoundingBox, Detection, FeedbackResult, RecognitionResult, RequestStatus } from './types.js';
import type { WireBatchImageResult, WireBatchResult, WireBoundingBox, WireCVResult, WireDetection, WireFeedbackResult } from './wire.js';

// ---------------------------------------------------------------- the guides' shape (not in /openapi.json)

interface GuidesDetection {
  class_name: string;
  bounding_box: WireBoundingBox;
  confidence?: number;
  model_name?: string;
}

interface GuidesResult {
  idempotency_id: string;
  status: RequestStatus;
  results?: GuidesDetection[];
}

// ---------------------------------------------------------------- reading

/**
 * A wire object as received: its fields are named by the contract, their values not yet
 * trusted. `field` hands a value back only when it has the contract's type, so a renamed or
 * retyped field breaks the compile here.
 */
type Received<T> = { readonly [K in keyof T]?: unknown };

function field<T, K extends keyof T>(o: Received<T>, name: K, is: (v: unknown) => v is T[K]): T[K] | undefined {
  const v = o[name];
  return is(v) ? v : undefined;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const STATUSES: readonly unknown[] = ['QUEUED', 'PROCESSING', 'DONE', 'ERROR'] satisfies RequestStatus[];
const isStatus = (v: unknown): v is RequestStatus => STATUSES.includes(v);

export class UnexpectedResponseError extends Error {
  constructor(what: string, readonly body: unknown) {
    super(`unexpected response from the server: ${what}`);
    this.name = 'UnexpectedResponseError';
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function box(v: unknown, body: unknown): BoundingBox {
  if (!isObject(v)) throw new UnexpectedResponseError('a detection has no bounding_box', body);
  const b: Received<WireBoundingBox> = v;
  const x = field(b, 'x', isNumber);
  const y = field(b, 'y', isNumber);
  const width = field(b, 'width', isNumber);
  const height = field(b, 'height', isNumber);
  if (x === undefined || y === undefined || width === undefined || height === undefined) {
    throw new UnexpectedResponseError('a bounding_box lacks x, y, width or height', body);
  }
  return { x, y, width, height };
}

/** A CVResult detection (`label`), or else one of the guides' (`class_name`). */
export function normalizeDetection(v: unknown, body: unknown = v): Detection {
  if (!isObject(v)) throw new UnexpectedResponseError('a detection is not an object', body);
  const wire: Received<WireDetection> = v;
  const guides: Received<GuidesDetection> = v;
  const label = field(wire, 'label', isString) ?? field(guides, 'class_name', isString);
  if (label === undefined) throw new UnexpectedResponseError('a detection has neither label nor class_name', body);
  const d: Detection = { label, boundingBox: box(v.bounding_box, body) };
  const productId = field(wire, 'external_id', isString);
  if (productId !== undefined) d.productId = productId;
  const confidence = field(wire, 'confidence', isNumber) ?? field(guides, 'confidence', isNumber);
  if (confidence !== undefined) d.confidence = confidence;
  const modelName = field(guides, 'model_name', isString);
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
  const wire: Received<WireCVResult> = body;
  const guides: Received<GuidesResult> = body;
  const requestId = field(wire, 'request_id', isString) ?? field(guides, 'idempotency_id', isString);
  if (requestId === undefined) throw new UnexpectedResponseError('neither request_id nor idempotency_id', body);
  const status = field(wire, 'status', isStatus);
  if (status === undefined) throw new UnexpectedResponseError(`unknown status ${String(body.status)}`, body);
  const r: RecognitionResult = {
    requestId,
    externalId: field(wire, 'external_id', isString) ?? '',
    status,
    // The guides' shape has no `success`: DONE means it worked.
    success: field(wire, 'success', isBoolean) ?? status === 'DONE',
    detections: detections(wire.results, body),
    replayed,
  };
  const imageUrl = field(wire, 'image_url', isString);
  if (imageUrl !== undefined) r.imageUrl = imageUrl;
  const error = field(wire, 'error', isString);
  if (error !== undefined) r.error = error;
  const responseCode = field(wire, 'response_code', isNumber);
  if (responseCode !== undefined) r.responseCode = responseCode;
  const ms = field(wire, 'processing_time_ms', isNumber);
  if (ms !== undefined) r.processingTimeMs = ms;
  if (isObject(wire.model)) {
    const model: Received<NonNullable<WireCVResult['model']>> = wire.model;
    const name = field(model, 'name', isString);
    const version = field(model, 'version', isString);
    if (name !== undefined) r.model = { name, ...(version !== undefined ? { version } : {}) };
  }
  return r;
}

export function normalizeBatch(body: unknown): BatchResult {
  if (!isObject(body) || !Array.isArray(body.results)) throw new UnexpectedResponseError('a batch answer without results', body);
  const wire: Received<WireBatchResult> = body;
  const results = body.results.map((e): BatchImageResult => {
    if (!isObject(e)) throw new UnexpectedResponseError('a batch entry is not an object', body);
    const entry: Received<WireBatchImageResult> = e;
    const status = field(entry, 'status', (v): v is 'DONE' => v === 'DONE') ?? 'FAILED';
    const image: BatchImageResult = {
      imageUrl: field(entry, 'image_url', isString) ?? '',
      requestId: field(entry, 'request_id', isString) ?? field<GuidesResult, 'idempotency_id'>(e, 'idempotency_id', isString) ?? null,
      status,
      success: field(entry, 'success', isBoolean) ?? status === 'DONE',
      detections: detections(entry.results, body),
    };
    const error = field(entry, 'error', isString);
    if (error !== undefined && error !== null) image.error = error;
    const code = field(entry, 'response_code', isNumber);
    if (code !== undefined && code !== null) image.responseCode = code;
    return image;
  });
  const batch: BatchResult = {
    success: field(wire, 'success', isBoolean) ?? true,
    totalImages: field(wire, 'total_images', isNumber) ?? results.length,
    results,
  };
  const batchId = field(wire, 'batch_id', isString);
  if (batchId !== undefined) batch.batchId = batchId;
  return batch;
}

export function normalizeFeedback(body: unknown): FeedbackResult {
  if (!isObject(body)) throw new UnexpectedResponseError('the body is not a JSON object', body);
  const wire: Received<WireFeedbackResult> = body;
  const requestId = field(wire, 'request_id', isString);
  const rating = field(wire, 'rating', (v): v is WireFeedbackResult['rating'] => v === -1 || v === 0 || v === 1);
  if (requestId === undefined || rating === undefined) throw new UnexpectedResponseError('feedback answer without request_id or rating', body);
  return { requestId, rating, status: field(wire, 'status', (v): v is 'success' => v === 'success') ?? 'success', message: field(wire, 'message', isString) ?? '' };
}
