/**
 * Maps a body or path that failed its schema to the route's contract error. The schema
 * decides valid/invalid; these only pick the code the contract names for the failure.
 */
import { isUuid } from '../store/db.js';
import { ApiError } from './errors.js';
import { MAX_BATCH_IMAGES } from './schemas.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function validExternalId(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && [...v].length <= 255 && !CONTROL.test(v);
}

const externalIdError = () => new ApiError('INVALID_EXTERNAL_ID');

export function invalidSync(body: unknown): ApiError {
  if (!isObject(body)) return new ApiError('INVALID_PARAMETERS', 'The body must be a JSON object with external_id and image_url or image_base64');
  if (body.external_id === undefined) return new ApiError('INVALID_PARAMETERS', 'external_id is required');
  if (!validExternalId(body.external_id)) return externalIdError();
  const hasUrl = body.image_url !== undefined;
  const hasB64 = body.image_base64 !== undefined;
  if (hasUrl === hasB64) return new ApiError('INVALID_PARAMETERS', 'Exactly one of image_url and image_base64 is required');
  if (hasUrl && typeof body.image_url !== 'string') return new ApiError('INVALID_PARAMETERS', 'image_url must be a string');
  if (hasUrl) return new ApiError('INVALID_IMAGE_URL');
  if (typeof body.image_base64 !== 'string') return new ApiError('INVALID_PARAMETERS', 'image_base64 must be a string');
  return new ApiError('INVALID_PARAMETERS');
}

export function invalidBatch(body: unknown): ApiError {
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
  if (urls.some((u) => typeof u !== 'string')) return new ApiError('INVALID_PARAMETERS', 'image_urls must contain only strings');
  if (body.external_id !== undefined && !validExternalId(body.external_id)) return externalIdError();
  return new ApiError('INVALID_PARAMETERS');
}

export function invalidRequestIdParams(params: unknown): ApiError {
  const id = isObject(params) ? params.id : undefined;
  return new ApiError('INVALID_REQUEST_ID', typeof id === 'string' && id !== '' ? 'The request id must be a UUID' : 'The request id is missing');
}

export const RATING_MESSAGE = 'Invalid rating: the rating must be -1 (bad), 0 (neutral) or 1 (good)';

export function invalidFeedback(body: unknown): ApiError {
  if (!isObject(body)) return new ApiError('INVALID_PARAMETERS', 'The body must be a JSON object with request_id and rating');
  if (typeof body.request_id !== 'string' || !isUuid(body.request_id)) {
    return new ApiError('INVALID_REQUEST_ID', body.request_id === undefined ? 'request_id is required' : 'request_id must be a UUID');
  }
  const r = body.rating;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < -1 || r > 1) return new ApiError('INVALID_RATING', RATING_MESSAGE);
  return new ApiError('INVALID_PARAMETERS');
}
