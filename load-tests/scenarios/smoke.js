// smoke: one VU, one pass over every operation and the main refusals, strict checks.
// Not a measurement: it proves the deployment answers every call as the contract says.
// Any failed check or unexpected status fails the run (CI runs it via `npm run load:smoke`).
// Latency is reported, not judged, unless SMOKE_LATENCY=true: no timing decides a CI pass.
// Last, a short timed phase (SMOKE_TIMED_CALLS sync calls and lookups, back to back) measures
// the API relative to the bare model in the same run; scripts/load.sh compares those ratios
// with load-tests/baseline/smoke.json (load-tests/lib/ratios.js, load-tests/tools/gate.mjs).
//   env: BASE_URL, API_KEY (high limits, classes *), OTHER_KEY (second key, same org),
//        IMAGE_BASE_URL (static server with the fixtures), FIXTURES_DIR, SMOKE_TIMED_CALLS (20)
import { check, group } from 'k6';
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import * as api from '../lib/api.js';
import { checkError, isUuid, rateLimitHeaders } from '../lib/checks.js';
import { BASE_URL, env, envBool, envNumber, required } from '../lib/config.js';
import { IMAGES, MISSING_IMAGE_URL, REFERENCE_IMAGE } from '../lib/images.js';
import { correctnessThresholds, latencyThresholds, processingSeries, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
import { MODEL_METRIC, PHASE_CALLS_METRIC, PHASE_METRIC, TIMED_LOOKUP, TIMED_SYNC, ratioReport } from '../lib/ratios.js';

const KEY = required('API_KEY');
const OTHER_KEY = env('OTHER_KEY', '');
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

const RECOGNITION = { p95: 15000, p99: 20000 }; // first calls on a cold CPU model are slow
const QUICK = { p95: 2000, p99: 3000 };
const TIMED_CALLS = envNumber('SMOKE_TIMED_CALLS', 20);

const modelInference = new Trend(MODEL_METRIC, true);
const phaseWall = new Trend(PHASE_METRIC, true);
const phaseCalls = new Counter(PHASE_CALLS_METRIC);

export const options = {
  scenarios: { smoke: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '3m' } },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ strict: true }),
    ...latencyThresholds({
      sync_base64: RECOGNITION, sync_url: RECOGNITION, batch: RECOGNITION, lookup: QUICK, feedback: QUICK,
      sync_refused: QUICK, batch_refused: QUICK, lookup_refused: QUICK, feedback_refused: QUICK, ops: QUICK,
    }, { reportOnly: !envBool('SMOKE_LATENCY', false) }),
    // The timed phase is judged by the ratio gate, never by a time.
    ...latencyThresholds({ [TIMED_SYNC]: RECOGNITION, [TIMED_LOOKUP]: QUICK }, { reportOnly: true }),
    ...processingSeries(['sync_base64', 'sync_url', TIMED_SYNC]),
  },
};

export default function () {
  let first;
  group('sync', () => {
    // PNG as plain base64, JPEG with a data-URI prefix, a PNG by URL.
    first = api.sync(REFERENCE_IMAGE, { key: KEY, endpoint: 'sync_base64' });
    const rl = rateLimitHeaders(first.res);
    check(first.res, {
      'sync_base64: RateLimit-* headers': () => rl.present && rl.limit > 0 && rl.remaining >= 0 && rl.reset >= 0,
      'sync_base64: finds objects in the reference image': () => first.body && first.body.results.length > 0,
    });
    const jpeg = IMAGES.find((i) => i.mime === 'image/jpeg');
    api.sync({ dataUri: jpeg.dataUri }, { key: KEY, endpoint: 'sync_base64' });
    api.sync({ url: IMAGES[1].url }, { key: KEY, endpoint: 'sync_url' });

    // Idempotent replay: same key, external_id and bytes → the stored result, flagged.
    const again = api.sync(REFERENCE_IMAGE, { key: KEY, endpoint: 'sync_base64', externalId: first.externalId });
    check(again.res, {
      'sync_base64: replay answers the same request_id': () => again.body && first.body && again.body.request_id === first.body.request_id,
      'sync_base64: replay is flagged Idempotent-Replayed': () => again.res.headers['Idempotent-Replayed'] === 'true',
    });
    // Same external_id with another image: 422.
    const reused = api.sync({ base64: IMAGES[1].base64 }, { key: KEY, endpoint: 'sync_refused', externalId: first.externalId, expected: [422] });
    checkError(reused.res, reused.body, 'sync_refused', 422, reused.body && reused.body.error, 'IDEMPOTENCY_KEY_REUSED');
  });

  const batchIds = [];
  group('batch', () => {
    const urls = [IMAGES[0].url, IMAGES[2].url, MISSING_IMAGE_URL];
    const b = api.batch(urls, { key: KEY });
    const entries = (b.body && b.body.results) || [];
    check(b.res, {
      'batch: good URLs are DONE': () => entries.length === 3 && entries[0].status === 'DONE' && entries[1].status === 'DONE',
      'batch: the missing image fails alone': () => entries.length === 3 && entries[2].status === 'FAILED' && entries[2].success === false,
    });
    for (const e of entries) if (isUuid(e.request_id) && e.status === 'DONE') batchIds.push(e.request_id);
  });

  group('lookup and feedback', () => {
    const id = first.body && first.body.request_id;
    api.lookup(id, { key: KEY });
    for (const bid of batchIds) api.lookup(bid, { key: KEY });
    api.feedback(id, 1, { key: KEY });
    api.feedback(id, -1, { key: KEY }); // replaces the first rating
    api.feedback(id, 0, { key: KEY });
    const missing = api.lookup(UNKNOWN_UUID, { key: KEY, endpoint: 'lookup_refused', expected: [404] });
    checkError(missing.res, missing.body, 'lookup_refused', 404, 'request_not_found', 'REQUEST_NOT_FOUND');
    // The signed image_url serves the stored image (when it points at this deployment).
    const imageUrl = first.body && first.body.image_url;
    if (typeof imageUrl === 'string' && imageUrl.startsWith(BASE_URL)) {
      const img = http.get(imageUrl, { tags: { endpoint: 'image', name: 'GET /v1/cv/images/{id}' } });
      check(img, { 'image: signed image_url serves the stored PNG': (r) => r.status === 200 && String(r.headers['Content-Type']).startsWith('image/png') });
    }
    const fbMissing = api.feedback(UNKNOWN_UUID, 1, { key: KEY, endpoint: 'feedback_refused', expected: [404] });
    checkError(fbMissing.res, fbMissing.body, 'feedback_refused', 404, 'request_not_found', 'REQUEST_NOT_FOUND');
    if (OTHER_KEY !== '') {
      // Ownership is per key: another key's lookup is 403, its rating 404.
      const foreign = api.lookup(id, { key: OTHER_KEY, endpoint: 'lookup_refused', expected: [403] });
      checkError(foreign.res, foreign.body, 'lookup_refused', 403, 'unauthorized', 'REQUEST_FORBIDDEN');
      const foreignFb = api.feedback(id, 1, { key: OTHER_KEY, endpoint: 'feedback_refused', expected: [404] });
      checkError(foreignFb.res, foreignFb.body, 'feedback_refused', 404, 'request_not_found', 'REQUEST_NOT_FOUND');
    }
  });

  group('401 without a valid key', () => {
    const id = first.body && first.body.request_id;
    const calls = [
      ['sync', (o) => api.sync(REFERENCE_IMAGE, o)],
      ['batch', (o) => api.batch([IMAGES[0].url], o)],
      ['lookup', (o) => api.lookup(id, o)],
      ['feedback', (o) => api.feedback(id, 1, o)],
    ];
    for (const [name, call] of calls) {
      const none = call({ key: null, endpoint: `${name}_refused`, expected: [401] });
      checkError(none.res, none.body, `${name}_refused`, 401, 'unauthorized', 'MISSING_API_KEY');
      const bad = call({ key: 'cvk_not-a-real-key-0000000000000000000000', endpoint: `${name}_refused`, expected: [401] });
      check(bad.res, { [`${name}_refused: unknown key is 401 INVALID_API_KEY`]: () => bad.res.status === 401 && bad.body && bad.body.error_code === 'INVALID_API_KEY' });
    }
  });

  group('400 on bad input', () => {
    const o = (endpoint) => ({ key: KEY, endpoint, expected: [400] });
    let r = api.raw('POST', '/v1/cv/requests/sync', { external_id: api.newExternalId() }, o('sync_refused'));
    checkError(r.res, r.body, 'sync_refused', 400, 'Bad Request', 'INVALID_PARAMETERS');
    r = api.raw('POST', '/v1/cv/requests/sync', { external_id: api.newExternalId(), image_url: IMAGES[0].url, image_base64: IMAGES[0].base64 }, o('sync_refused'));
    check(r.res, { 'sync_refused: both image fields is 400 Bad Request': () => r.res.status === 400 && r.body && r.body.error === 'Bad Request' });
    r = api.raw('POST', '/v1/cv/requests/sync', { external_id: api.newExternalId(), image_base64: 'bm90IGFuIGltYWdlIGF0IGFsbA==' }, o('sync_refused'));
    checkError(r.res, r.body, 'sync_refused', 400, 'Bad Request', 'UNSUPPORTED_IMAGE_FORMAT');
    r = api.raw('POST', '/v1/cv/requests/sync', { external_id: '', image_url: IMAGES[0].url }, o('sync_refused'));
    check(r.res, { 'sync_refused: empty external_id is 400': () => r.res.status === 400 && r.body && ['INVALID_EXTERNAL_ID', 'INVALID_PARAMETERS'].includes(r.body.error_code) });

    r = api.raw('POST', '/v1/cv/requests/batch', { image_urls: [] }, o('batch_refused'));
    checkError(r.res, r.body, 'batch_refused', 400, 'invalid_request', 'MISSING_IMAGE_URLS');
    r = api.raw('POST', '/v1/cv/requests/batch', {}, o('batch_refused'));
    checkError(r.res, r.body, 'batch_refused', 400, 'invalid_request', 'MISSING_IMAGE_URLS');
    r = api.raw('POST', '/v1/cv/requests/batch', { image_urls: Array.from({ length: 11 }, () => IMAGES[0].url) }, o('batch_refused'));
    checkError(r.res, r.body, 'batch_refused', 400, 'invalid_request', 'TOO_MANY_IMAGES');
    check(r.res, { 'batch_refused: TOO_MANY_IMAGES names 10 and 11': () => r.body && /10/.test(r.body.message) && /11/.test(r.body.message) });

    r = api.lookup('not-a-uuid', o('lookup_refused'));
    checkError(r.res, r.body, 'lookup_refused', 400, 'missing_request_id', 'INVALID_REQUEST_ID');

    const id = first.body && first.body.request_id;
    for (const rating of [2, '1', 0.5, true]) {
      r = api.feedback(id, rating, o('feedback_refused'));
      checkError(r.res, r.body, 'feedback_refused', 400, 'invalid_rating', 'INVALID_RATING');
    }
  });

  group('operations endpoints', () => {
    api.raw('GET', '/healthz', null, { endpoint: 'ops' });
    api.raw('GET', '/readyz', null, { endpoint: 'ops' });
    const doc = api.raw('GET', '/openapi.json', null, { endpoint: 'ops' });
    const text = doc.res.body || '';
    check(doc.res, {
      'ops: OpenAPI names the four operations': () => ['createSyncCvRequest', 'createBatchCvRequest', 'getRequest', 'submitFeedback'].every((op) => text.includes(op)),
    });
  });
  group('timed phase', timedPhase);
}

/**
 * The model's inference time as the service itself counts it: the sum and count of the
 * inference_duration_seconds histogram on /metrics (every backend and model), so the mean
 * over a span is Δsum / Δcount. Undefined when /metrics is not on the API's port.
 */
function inferenceTotals() {
  const res = http.get(`${BASE_URL}/metrics`, { tags: { endpoint: 'metrics', name: 'GET /metrics' }, responseCallback: http.expectedStatuses(200, 404) });
  if (res.status !== 200 || typeof res.body !== 'string') return undefined;
  let sum = 0;
  let count = 0;
  for (const line of res.body.split('\n')) {
    const m = /^inference_duration_seconds_(sum|count)(?:\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'sum') sum += Number(m[2]);
    else count += Number(m[2]);
  }
  return { sum, count };
}

/** Back-to-back sync calls on the reference image, then lookups, with the model's own time beside them. */
function timedPhase() {
  const before = inferenceTotals();
  const ids = [];
  const started = Date.now();
  for (let i = 0; i < TIMED_CALLS; i += 1) {
    const r = api.sync(REFERENCE_IMAGE, { key: KEY, endpoint: TIMED_SYNC });
    if (r.body && r.body.request_id) ids.push(r.body.request_id);
  }
  phaseWall.add(Date.now() - started);
  phaseCalls.add(TIMED_CALLS);
  const after = inferenceTotals();
  const calls = before && after ? after.count - before.count : 0;
  // One inference per call is what the ratio assumes; anything else is reported by the gate as not measured.
  if (calls === TIMED_CALLS) modelInference.add(((after.sum - before.sum) / calls) * 1000);
  for (const id of ids) api.lookup(id, { key: KEY, endpoint: TIMED_LOOKUP });
}

export const handleSummary = summaryHandler(ratioReport);
