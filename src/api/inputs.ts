/**
 * One input parser per operation: the raw body (or path) in, the typed input of the use
 * case out, or the contract's ApiError for the first rule it breaks. This is the only
 * place request input is checked; the route schemas document the same rules in OpenAPI
 * (a test validates real requests and answers against that document).
 */
import { isUuid } from '../recognition/ids.js';
import type { SyncImage } from '../recognition/types.js';
import { ApiError } from './errors.js';
import { MAX_BATCH_IMAGES, MAX_IMAGE_URL_LENGTH } from './schemas.js';

export interface SyncInput {
  externalId: string;
  image: SyncImage;
}
export interface BatchInput {
  urls: string[];
  externalId: string | null;
}
export interface FeedbackInput {
  requestId: string;
  rating: -1 | 0 | 1;
}

export type Parser<T> = (raw: unknown) => T | ApiError;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
/** A lone UTF-16 surrogate: PostgreSQL text cannot hold one (it would become U+FFFD and collide). */
const LONE_SURROGATE = /\p{Cs}/u;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Text that survives storage unchanged: no lone surrogates. */
export function isWellFormedText(v: string): boolean {
  return !LONE_SURROGATE.test(v);
}

export function validExternalId(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && [...v].length <= 255 && !CONTROL.test(v) && isWellFormedText(v);
}

const EXTERNAL_ID_MESSAGE = 'external_id must be 1 to 255 characters, without control characters or lone UTF-16 surrogates';

export const parseSync: Parser<SyncInput> = (body) => {
  if (!isObject(body)) return new ApiError('INVALID_PARAMETERS', 'The body must be a JSON object with external_id and image_url or image_base64');
  if (body.external_id === undefined) return new ApiError('INVALID_PARAMETERS', 'external_id is required');
  if (!validExternalId(body.external_id)) return new ApiError('INVALID_EXTERNAL_ID', EXTERNAL_ID_MESSAGE);
  const url = body.image_url;
  const base64 = body.image_base64;
  // The one check of "exactly one image".
  if ((url === undefined) === (base64 === undefined)) return new ApiError('INVALID_PARAMETERS', 'Exactly one of image_url and image_base64 is required');
  if (url !== undefined) {
    if (typeof url !== 'string') return new ApiError('INVALID_PARAMETERS', 'image_url must be a string');
    if (url.length > MAX_IMAGE_URL_LENGTH || !isWellFormedText(url)) return new ApiError('INVALID_IMAGE_URL');
    return { externalId: body.external_id, image: { url } };
  }
  if (typeof base64 !== 'string') return new ApiError('INVALID_PARAMETERS', 'image_base64 must be a string');
  return { externalId: body.external_id, image: { base64 } };
};

export const parseBatch: Parser<BatchInput> = (body) => {
  if (body === undefined || body === null) return new ApiError('MISSING_IMAGE_URLS', 'image_urls is required: send 1 to 10 image URLs');
  if (!isObject(body)) return new ApiError('INVALID_PARAMETERS', 'The body must be a JSON object with image_urls');
  const urls = body.image_urls;
  if (urls === undefined || urls === null || (Array.isArray(urls) && urls.length === 0)) {
    return new ApiError('MISSING_IMAGE_URLS', 'image_urls is required and must not be empty');
  }
  if (!Array.isArray(urls)) return new ApiError('INVALID_PARAMETERS', 'image_urls must be an array of URLs');
  if (urls.length > MAX_BATCH_IMAGES) {
    return new ApiError('TOO_MANY_IMAGES', `Too many images: the maximum is ${MAX_BATCH_IMAGES} per batch, received ${urls.length}`);
  }
  if (!urls.every((u): u is string => typeof u === 'string')) return new ApiError('INVALID_PARAMETERS', 'image_urls must contain only strings');
  if (body.external_id !== undefined && !validExternalId(body.external_id)) return new ApiError('INVALID_EXTERNAL_ID', EXTERNAL_ID_MESSAGE);
  return { urls, externalId: body.external_id ?? null };
};

export const parseRequestId: Parser<string> = (params) => {
  const id = isObject(params) ? params.id : undefined;
  if (typeof id === 'string' && isUuid(id)) return id;
  return new ApiError('INVALID_REQUEST_ID', typeof id === 'string' && id !== '' ? 'The request id must be a UUID' : 'The request id is missing');
};

export const RATING_MESSAGE = 'Invalid rating: the rating must be -1 (bad), 0 (neutral) or 1 (good)';

export const parseFeedback: Parser<FeedbackInput> = (body) => {
  if (!isObject(body)) return new ApiError('INVALID_PARAMETERS', 'The body must be a JSON object with request_id and rating');
  if (typeof body.request_id !== 'string' || !isUuid(body.request_id)) {
    return new ApiError('INVALID_REQUEST_ID', body.request_id === undefined ? 'request_id is required' : 'request_id must be a UUID');
  }
  const r = body.rating;
  if (r !== -1 && r !== 0 && r !== 1) return new ApiError('INVALID_RATING', RATING_MESSAGE);
  return { requestId: body.request_id, rating: r };
};

/** The parsed input, or the parser's ApiError thrown to the error handler. */
export function parseOrThrow<T>(parser: Parser<T>, raw: unknown): T {
  const out = parser(raw);
  if (out instanceof ApiError) throw out;
  return out;
}
