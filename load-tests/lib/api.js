// One function per API operation. Each sends the call with its `endpoint` tag and a
// grouped `name` (so ids in paths don't explode the metric series), checks the response
// against the contract, and feeds the custom metrics. They return the parsed body (or
// null) so scenarios can chain lookups and feedback on the ids they got back.
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL, HTTP_TIMEOUT } from './config.js';
import { checkCvResult, checkBatchResult, checkFeedback, checkErrorBody, parseJson } from './checks.js';
import { detections, outsideProcessing, processingTime, rejected429, unexpectedStatus } from './metrics.js';

let counter = 0;
/** A unique external_id: the (key, external_id) pair is idempotent, so load needs fresh ones. */
export function newExternalId(prefix = 'k6') {
  counter += 1;
  return `${prefix}-${__VU}-${__ITER}-${counter}-${Date.now()}`;
}

function params(key, endpoint, name, expected, extraHeaders = {}) {
  const headers = { 'Content-Type': 'application/json', ...extraHeaders };
  if (key !== undefined && key !== null) headers['x-api-key'] = key;
  return {
    headers,
    timeout: HTTP_TIMEOUT,
    tags: { endpoint, name },
    // Statuses the caller asked for are not failures in http_req_failed.
    responseCallback: http.expectedStatuses(...expected),
  };
}

function observe(res, endpoint, expected) {
  const ok = expected.includes(res.status);
  unexpectedStatus.add(!ok, { endpoint });
  if (res.status === 429) {
    const body = parseJson(res);
    rejected429.add(1, { endpoint, error_code: body && body.error_code ? String(body.error_code) : 'unknown' });
  }
  return ok;
}

function observeCvResult(res, body, endpoint) {
  if (!body) return;
  // A replay returns the stored result: its processing_time_ms is not this call's work.
  const replayed = res.headers['Idempotent-Replayed'] === 'true';
  if (typeof body.processing_time_ms === 'number' && !replayed) {
    processingTime.add(body.processing_time_ms, { endpoint });
    outsideProcessing.add(Math.max(0, res.timings.duration - body.processing_time_ms), { endpoint });
  }
  if (Array.isArray(body.results)) detections.add(body.results.length, { endpoint });
}

/**
 * POST /v1/cv/requests/sync. `image` is { base64 } or { url } or { dataUri }.
 * opts: { key, externalId, expected (statuses, default [200]), endpoint (tag), strict }.
 */
export function sync(image, opts = {}) {
  const endpoint = opts.endpoint || (image.url ? 'sync_url' : 'sync_base64');
  const expected = opts.expected || [200];
  const payload = { external_id: opts.externalId || newExternalId('sync') };
  if (image.url) payload.image_url = image.url;
  else payload.image_base64 = image.dataUri || image.base64;
  const res = http.post(`${BASE_URL}/v1/cv/requests/sync`, JSON.stringify(payload),
    params(opts.key, endpoint, 'POST /v1/cv/requests/sync', expected, opts.headers));
  observe(res, endpoint, expected);
  const body = parseJson(res);
  if (res.status === 200) {
    observeCvResult(res, body, endpoint);
    checkCvResult(res, body, endpoint, { externalId: payload.external_id, expectDone: opts.expectDone !== false });
  } else {
    check(res, { [`${endpoint}: status is ${expected.join('/')}`]: (r) => expected.includes(r.status) }, { endpoint });
    if (res.status >= 400) checkErrorBody(res, body, endpoint);
  }
  return { res, body, externalId: payload.external_id };
}

/** POST /v1/cv/requests/batch with 1–10 URLs. */
export function batch(urls, opts = {}) {
  const endpoint = opts.endpoint || 'batch';
  const expected = opts.expected || [200];
  const payload = { image_urls: urls };
  const externalId = opts.externalId === undefined ? newExternalId('batch') : opts.externalId;
  if (externalId !== null) payload.external_id = externalId;
  const res = http.post(`${BASE_URL}/v1/cv/requests/batch`, JSON.stringify(payload),
    params(opts.key, endpoint, 'POST /v1/cv/requests/batch', expected));
  observe(res, endpoint, expected);
  const body = parseJson(res);
  if (res.status === 200) {
    checkBatchResult(res, body, endpoint, { urls, externalId });
    if (body && Array.isArray(body.results)) {
      for (const r of body.results) if (Array.isArray(r.results)) detections.add(r.results.length, { endpoint });
    }
  } else {
    check(res, { [`${endpoint}: status is ${expected.join('/')}`]: (r) => expected.includes(r.status) }, { endpoint });
    if (res.status >= 400) checkErrorBody(res, body, endpoint);
  }
  return { res, body };
}

/** GET /v1/cv/requests/{id}. */
export function lookup(id, opts = {}) {
  const endpoint = opts.endpoint || 'lookup';
  const expected = opts.expected || [200];
  const res = http.get(`${BASE_URL}/v1/cv/requests/${encodeURIComponent(id)}`,
    params(opts.key, endpoint, 'GET /v1/cv/requests/{id}', expected));
  observe(res, endpoint, expected);
  const body = parseJson(res);
  if (res.status === 200) {
    checkCvResult(res, body, endpoint, { requestId: id, expectDone: opts.expectDone !== false });
  } else {
    check(res, { [`${endpoint}: status is ${expected.join('/')}`]: (r) => expected.includes(r.status) }, { endpoint });
    if (res.status >= 400) checkErrorBody(res, body, endpoint);
  }
  return { res, body };
}

/** POST /v1/cv/feedback. `rating` is sent as given (tests send invalid ones on purpose). */
export function feedback(requestId, rating, opts = {}) {
  const endpoint = opts.endpoint || 'feedback';
  const expected = opts.expected || [200];
  const res = http.post(`${BASE_URL}/v1/cv/feedback`, JSON.stringify({ request_id: requestId, rating }),
    params(opts.key, endpoint, 'POST /v1/cv/feedback', expected));
  observe(res, endpoint, expected);
  const body = parseJson(res);
  if (res.status === 200) {
    checkFeedback(res, body, endpoint, { requestId, rating });
  } else {
    check(res, { [`${endpoint}: status is ${expected.join('/')}`]: (r) => expected.includes(r.status) }, { endpoint });
    if (res.status >= 400) checkErrorBody(res, body, endpoint);
  }
  return { res, body };
}

/** A raw call for the odd cases (malformed bodies, operations endpoints). */
export function raw(method, path, body, opts = {}) {
  const endpoint = opts.endpoint || 'other';
  const expected = opts.expected || [200];
  const res = http.request(method, `${BASE_URL}${path}`, body === null || body === undefined ? null : (typeof body === 'string' ? body : JSON.stringify(body)),
    params(opts.key, endpoint, opts.name || `${method} ${path}`, expected, opts.headers));
  observe(res, endpoint, expected);
  check(res, { [`${endpoint}: status is ${expected.join('/')}`]: (r) => expected.includes(r.status) }, { endpoint });
  return { res, body: parseJson(res) };
}
