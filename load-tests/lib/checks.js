// Checks of response bodies against the spec and CONTRACT.md. Check names carry the
// endpoint but never an id, so k6 aggregates them into one line each.
import { check } from 'k6';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['QUEUED', 'PROCESSING', 'DONE', 'ERROR'];

export function isUuid(v) {
  return typeof v === 'string' && UUID.test(v);
}

export function parseJson(res) {
  try {
    return typeof res.body === 'string' && res.body.length > 0 ? JSON.parse(res.body) : null;
  } catch {
    return null;
  }
}

function isInt(v) {
  return typeof v === 'number' && Number.isInteger(v);
}

function isDetection(d) {
  const b = d && d.bounding_box;
  return typeof d.label === 'string' && d.label.length > 0 && typeof d.external_id === 'string'
    && b !== null && typeof b === 'object' && isInt(b.x) && isInt(b.y) && isInt(b.width) && isInt(b.height)
    && b.x >= 0 && b.y >= 0 && b.width >= 0 && b.height >= 0
    && (d.confidence === undefined || (d.confidence >= 0 && d.confidence <= 1));
}

/** CVResult from sync or lookup. want: { externalId, requestId, expectDone }. */
export function checkCvResult(res, body, endpoint, want = {}) {
  const b = body || {};
  const checks = {
    [`${endpoint}: status 200`]: () => res.status === 200,
    [`${endpoint}: JSON CVResult`]: () => body !== null && typeof body === 'object',
    [`${endpoint}: request_id is a uuid`]: () => isUuid(b.request_id),
    [`${endpoint}: status is a known state`]: () => STATUSES.includes(b.status),
    [`${endpoint}: success iff DONE`]: () => b.success === (b.status === 'DONE'),
    [`${endpoint}: ERROR carries an error text`]: () => b.status !== 'ERROR' || (typeof b.error === 'string' && b.error.length > 0),
    [`${endpoint}: results are detections`]: () => Array.isArray(b.results) && b.results.every(isDetection),
    [`${endpoint}: image_url is the service's signed URL`]: () => typeof b.image_url === 'string' && /\/v1\/cv\/images\/[0-9a-f-]{36}\?/.test(b.image_url),
  };
  if (want.expectDone) checks[`${endpoint}: DONE`] = () => b.status === 'DONE' && b.success === true;
  if (want.externalId !== undefined) checks[`${endpoint}: external_id echoed`] = () => b.external_id === want.externalId;
  if (want.requestId !== undefined) checks[`${endpoint}: request_id is the one asked for`] = () => b.request_id === want.requestId;
  return check(res, checks, { endpoint });
}

/** BatchCVResult. want: { urls, externalId }. */
export function checkBatchResult(res, body, endpoint, want) {
  const b = body || {};
  const entries = Array.isArray(b.results) ? b.results : [];
  return check(res, {
    [`${endpoint}: status 200`]: () => res.status === 200,
    [`${endpoint}: total_images equals the URLs sent`]: () => b.total_images === want.urls.length,
    [`${endpoint}: one entry per URL, in order`]: () => entries.length === want.urls.length && entries.every((e, i) => e.image_url === want.urls[i]),
    [`${endpoint}: batch_id is a string, the external_id sent if any`]: () => typeof b.batch_id === 'string' && b.batch_id.length > 0
      && (want.externalId === null || b.batch_id === want.externalId),
    [`${endpoint}: entries are DONE or FAILED`]: () => entries.every((e) => (e.status === 'DONE' && e.success === true && isUuid(e.request_id))
      || (e.status === 'FAILED' && e.success === false && typeof e.error === 'string')),
    [`${endpoint}: entry results are detections`]: () => entries.every((e) => Array.isArray(e.results) && e.results.every(isDetection)
      && (e.status === 'DONE' || e.results.length === 0)),
  }, { endpoint });
}

export function checkFeedback(res, body, endpoint, want) {
  const b = body || {};
  return check(res, {
    [`${endpoint}: status 200`]: () => res.status === 200,
    [`${endpoint}: status "success"`]: () => b.status === 'success' && typeof b.message === 'string',
    [`${endpoint}: echoes request_id and rating`]: () => b.request_id === want.requestId && b.rating === want.rating,
  }, { endpoint });
}

/** Every error body has error, message and error_code (CONTRACT.md, Errors). */
export function checkErrorBody(res, body, endpoint) {
  const b = body || {};
  return check(res, {
    [`${endpoint}: error body has error, message, error_code`]: () => typeof b.error === 'string' && typeof b.message === 'string'
      && typeof b.error_code === 'string',
  }, { endpoint });
}

/** A specific error: status, `error` and `error_code` as the contract names them. */
export function checkError(res, body, endpoint, status, error, errorCode) {
  const b = body || {};
  return check(res, {
    [`${endpoint}: ${status} ${error} ${errorCode}`]: () => res.status === status && b.error === error && b.error_code === errorCode,
  }, { endpoint });
}

/** RateLimit-* headers on a limited endpoint; returns them parsed. */
export function rateLimitHeaders(res) {
  const h = (name) => res.headers[name] ?? res.headers[name.toLowerCase()];
  return {
    limit: Number(h('Ratelimit-Limit')),
    remaining: Number(h('Ratelimit-Remaining')),
    reset: Number(h('Ratelimit-Reset')),
    retryAfter: h('Retry-After') === undefined ? undefined : Number(h('Retry-After')),
    present: h('Ratelimit-Limit') !== undefined && h('Ratelimit-Remaining') !== undefined && h('Ratelimit-Reset') !== undefined,
  };
}
