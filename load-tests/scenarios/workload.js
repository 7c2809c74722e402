// workload: the traffic of many clients with every kind of image, and the refusals they meet,
// each as its own k6 scenario with its own checks and thresholds (all run at the same time):
//   spread      constant arrival rate over WORKLOAD_KEYS (iterations take the keys in turn):
//               sync base64 of JPEG, PNG, WebP and GIF from 320 px to 12 MP, and sync URL of
//               the fixtures. Expects 200 DONE.
//   edges       the limits, accepted: a base64 4 characters under the encoded-size limit, an
//               image of exactly the pixel limit (200 DONE); refused: 4 characters over, one
//               row over the pixel limit (400 IMAGE_TOO_LARGE) and TIFF (400 UNSUPPORTED_IMAGE_FORMAT).
//   balance     a key of an organisation whose call balance is 0: sync and batch answer 402
//               payment_required INSUFFICIENT_BALANCE. Needs BALANCE_KEY.
//   timeout     a sync URL whose image host stalls past the sync deadline: 408 Request Timeout
//               PROCESSING_TIMEOUT with the external_id. Needs the deployment's URL download
//               limit (IMAGE_FETCH_TIMEOUT_MS) above its sync deadline (SYNC_TIMEOUT_MS);
//               `load.sh workload --start` starts it so. EXPECT_408=false leaves it out.
//   rate_limit  LIMITS_KEY (the default limit, RATE_LIMIT per minute): RATE_LIMIT calls
//               admitted, the next ones 429 RATE_LIMITED with Retry-After; QUOTA_KEY
//               (monthly quota 2): the third call 429 MONTHLY_QUOTA_EXCEEDED.
// Images: load-tests/tools/workload-images.mjs makes them at run time (WORKLOAD_IMAGES_DIR).
//   env: RATE (spread calls/s, 1), DURATION (1m), WORKLOAD_KEYS, API_KEY, LIMITS_KEY,
//        QUOTA_KEY, BALANCE_KEY, RATE_LIMIT (10), SYNC_TIMEOUT_MS (29000), EXPECT_408,
//        P95_MS/P99_MS (spread), EDGE_P95_MS (20000), ERROR_RATE (spread, 0.01),
//        WORKLOAD_SCENARIOS (all: spread,edges,balance,timeout,rate_limit)
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import * as api from '../lib/api.js';
import { checkError, rateLimitHeaders } from '../lib/checks.js';
import { env, envBool, envNumber, required } from '../lib/config.js';
import { IMAGES, pick, workloadImages } from '../lib/images.js';
import { keyList, rotatingKey } from '../lib/workload.js';
import { latencyThresholds, processingSeries, recognitionLimits, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';

const KEYS = keyList(env('WORKLOAD_KEYS', env('API_KEY', '')));
const RATE = envNumber('RATE', 1);
const DURATION = env('DURATION', '1m');
const SYNC_TIMEOUT_MS = envNumber('SYNC_TIMEOUT_MS', 29000);
const RATE_LIMIT = envNumber('RATE_LIMIT', 10);
const EDGE = { p95: envNumber('EDGE_P95_MS', 20000), p99: envNumber('EDGE_P95_MS', 20000) };
const QUICK = { p95: 2000, p99: 3000 };
const IMG = workloadImages(required('WORKLOAD_IMAGES_DIR'));

const wanted = env('WORKLOAD_SCENARIOS', 'spread,edges,balance,timeout,rate_limit').split(',').map((s) => s.trim());
const skipped = [];
function enabled(name, needs = true, why = '') {
  if (!wanted.includes(name)) return false;
  if (!needs) skipped.push(`${name} (${why})`);
  return needs;
}
const ON = {
  spread: enabled('spread'),
  edges: enabled('edges'),
  balance: enabled('balance', env('BALANCE_KEY', '') !== '', 'no BALANCE_KEY: a key of an organisation with balance 0'),
  timeout: enabled('timeout', envBool('EXPECT_408', true), 'EXPECT_408=false'),
  rate_limit: enabled('rate_limit', env('LIMITS_KEY', '') !== '', 'no LIMITS_KEY'),
};

/** Refusals by error_code and scenario: the thresholds count exactly the ones expected. */
const refusals = new Counter('workload_refusals');

const one = (exec, extra = {}) => ({ executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '3m', exec, ...extra });
const scenarios = {};
const thresholds = {};
const strict = (name) => {
  thresholds[`checks{scenario:${name}}`] = ['rate==1'];
  thresholds[`http_req_failed{scenario:${name}}`] = ['rate==0'];
};
if (ON.spread) {
  scenarios.spread = {
    executor: 'constant-arrival-rate', exec: 'spread', rate: Math.round(RATE * 60), timeUnit: '1m', duration: DURATION,
    preAllocatedVUs: envNumber('PRE_VUS', Math.min(KEYS.length, Math.ceil(RATE * 4) + 2)), maxVUs: envNumber('MAX_VUS', Math.max(KEYS.length, Math.ceil(RATE * 15) + 5)),
  };
  const rec = recognitionLimits();
  const formats = [...new Set(IMG.manifest.images.filter((i) => i.kind === 'spread').map((i) => i.format))];
  const endpoints = [...formats.map((f) => `sync_${f}`), 'sync_url'];
  Object.assign(thresholds, latencyThresholds(Object.fromEntries(endpoints.map((e) => [e, rec]))), processingSeries(endpoints));
  thresholds['checks{scenario:spread}'] = [`rate>${1 - envNumber('ERROR_RATE', 0.01)}`];
  thresholds['http_req_failed{scenario:spread}'] = [`rate<${envNumber('ERROR_RATE', 0.01)}`];
}
if (ON.edges) {
  scenarios.edges = one('edges', { iterations: envNumber('EDGE_ITERATIONS', 1) });
  Object.assign(thresholds, latencyThresholds({ sync_edge_base64: EDGE, sync_edge_pixels: EDGE, sync_refused: QUICK }), processingSeries(['sync_edge_base64', 'sync_edge_pixels']));
  strict('edges');
  thresholds['workload_refusals{scenario:edges,error_code:IMAGE_TOO_LARGE}'] = [`count==${2 * envNumber('EDGE_ITERATIONS', 1)}`];
  thresholds['workload_refusals{scenario:edges,error_code:UNSUPPORTED_IMAGE_FORMAT}'] = [`count==${envNumber('EDGE_ITERATIONS', 1)}`];
}
if (ON.balance) {
  scenarios.balance = one('balance', { iterations: envNumber('BALANCE_ITERATIONS', 3) });
  Object.assign(thresholds, latencyThresholds({ sync_402: QUICK, batch_402: QUICK }));
  strict('balance');
  thresholds['workload_refusals{scenario:balance,error_code:INSUFFICIENT_BALANCE}'] = [`count==${2 * envNumber('BALANCE_ITERATIONS', 3)}`];
}
if (ON.timeout) {
  scenarios.timeout = one('timeout');
  // The 408 comes at the deadline, not long after it (nor a client timeout instead).
  Object.assign(thresholds, latencyThresholds({ sync_408: { p95: SYNC_TIMEOUT_MS + 5000, p99: SYNC_TIMEOUT_MS + 5000 } }));
  strict('timeout');
  thresholds['workload_refusals{scenario:timeout,error_code:PROCESSING_TIMEOUT}'] = ['count==1'];
}
if (ON.rate_limit) {
  scenarios.rate_limit = one('rateLimit');
  Object.assign(thresholds, latencyThresholds({ sync_admitted: EDGE, sync_429: QUICK }, { reportOnly: true }));
  strict('rate_limit');
  thresholds['workload_refusals{scenario:rate_limit,error_code:RATE_LIMITED}'] = ['count==3'];
  if (env('QUOTA_KEY', '') !== '') thresholds['workload_refusals{scenario:rate_limit,error_code:MONTHLY_QUOTA_EXCEEDED}'] = ['count==1'];
}
if (Object.keys(scenarios).length === 0) throw new Error(`WORKLOAD_SCENARIOS selects nothing that can run (skipped: ${skipped.join(', ') || 'none'})`);

export const options = { scenarios, summaryTrendStats: TREND_STATS, thresholds };

/** A refusal with its status, `error` and error_code as the contract names them; counted by code. */
function expectRefusal(r, endpoint, status, error, code) {
  const ok = checkError(r.res, r.body, endpoint, status, error, code);
  if (r.body && typeof r.body.error_code === 'string') refusals.add(1, { error_code: r.body.error_code });
  return ok;
}

export function spread() {
  const key = rotatingKey(KEYS);
  // One in five by URL (the fixtures on the runner's static server), the rest base64.
  if (Math.random() < 0.2) {
    api.sync({ url: pick(IMAGES).url }, { key, endpoint: 'sync_url' });
    return;
  }
  const image = IMG.spread[Math.floor(Math.random() * IMG.spread.length)];
  api.sync({ base64: image.base64 }, { key, endpoint: `sync_${image.format}` });
}

export function edges() {
  const key = KEYS[0];
  for (const image of IMG.edge) {
    const endpoint = image.name.includes('pixel') ? 'sync_edge_pixels' : 'sync_edge_base64';
    const r = api.sync({ base64: image.base64 }, { key, endpoint });
    check(r.res, { [`${endpoint}: ${image.width}×${image.height}, base64 ${image.base64_length} chars accepted`]: () => r.res.status === 200 });
  }
  for (const image of IMG.refused) {
    const r = api.sync({ base64: image.base64 }, { key, endpoint: 'sync_refused', expected: [400] });
    expectRefusal(r, 'sync_refused', 400, 'Bad Request', image.error_code);
  }
}

export function balance() {
  const key = required('BALANCE_KEY');
  const s = api.sync({ base64: IMAGES[0].base64 }, { key, endpoint: 'sync_402', expected: [402] });
  expectRefusal(s, 'sync_402', 402, 'payment_required', 'INSUFFICIENT_BALANCE');
  const b = api.batch([IMAGES[0].url, IMAGES[1].url], { key, endpoint: 'batch_402', expected: [402] });
  expectRefusal(b, 'batch_402', 402, 'payment_required', 'INSUFFICIENT_BALANCE');
}

export function timeout() {
  // The host holds the image back well past the deadline; the service must answer 408 at it.
  const url = `${IMAGES[0].url}?delay_ms=${SYNC_TIMEOUT_MS + 20000}`;
  const r = api.sync({ url }, { key: KEYS[0], endpoint: 'sync_408', expected: [408] });
  expectRefusal(r, 'sync_408', 408, 'Request Timeout', 'PROCESSING_TIMEOUT');
  check(r.res, { 'sync_408: the body carries the external_id': () => r.body !== null && r.body.external_id === r.externalId });
}

export function rateLimit() {
  const key = required('LIMITS_KEY');
  const small = IMAGES.reduce((a, b) => (b.bytes < a.bytes ? b : a));
  for (let i = 0; i < RATE_LIMIT; i++) {
    const r = api.sync({ base64: small.base64 }, { key, endpoint: 'sync_admitted' });
    check(r.res, { 'rate_limit: RateLimit-Remaining counts down': () => rateLimitHeaders(r.res).remaining === RATE_LIMIT - 1 - i });
  }
  for (let i = 0; i < 3; i++) {
    const r = api.sync({ base64: small.base64 }, { key, endpoint: 'sync_429', expected: [429] });
    expectRefusal(r, 'sync_429', 429, 'Too Many Requests', 'RATE_LIMITED');
    const h = rateLimitHeaders(r.res);
    check(r.res, { 'sync_429: Retry-After in 1..60 s, Remaining 0': () => Number.isInteger(h.retryAfter) && h.retryAfter >= 1 && h.retryAfter <= 60 && h.remaining === 0 });
  }
  const quotaKey = env('QUOTA_KEY', '');
  if (quotaKey !== '') {
    // The runner makes this key with a monthly quota of 2.
    for (let i = 0; i < 2; i++) api.sync({ base64: small.base64 }, { key: quotaKey, endpoint: 'sync_admitted' });
    const over = api.sync({ base64: small.base64 }, { key: quotaKey, endpoint: 'sync_429', expected: [429] });
    expectRefusal(over, 'sync_429', 429, 'Too Many Requests', 'MONTHLY_QUOTA_EXCEEDED');
  }
}

export const handleSummary = summaryHandler((data) => {
  const m = data.metrics;
  const n = (name) => m[name]?.values.count ?? 0;
  const rate = (name) => (m[name] ? `${(m[name].values.rate * 100).toFixed(1)}%` : '-');
  const lines = ['', `offered ${RATE} spread calls/s over ${KEYS.length} keys (taken in turn); images:`];
  for (const i of IMG.manifest.images) {
    lines.push(`  ${i.kind.padEnd(8)} ${i.name.padEnd(24)} ${i.format.padEnd(5)} ${`${i.width}×${i.height}`.padStart(10)} ${String(i.bytes).padStart(9)} B${i.error_code ? `  -> 400 ${i.error_code}` : ''}`);
  }
  lines.push('', 'scenario     checks   refusals (by error_code)');
  const refusalsOf = (s) => Object.keys(m).filter((k) => k.startsWith('workload_refusals{') && k.includes(`scenario:${s}`))
    .map((k) => `${/error_code:([A-Z_]+)/.exec(k)?.[1]} ${n(k)}`).join(', ');
  for (const s of Object.keys(scenarios)) lines.push(`${s.padEnd(12)} ${rate(`checks{scenario:${s}}`).padStart(6)}   ${refusalsOf(s) || '-'}`);
  if (skipped.length > 0) lines.push(`skipped: ${skipped.join('; ')}`);
  return lines;
});
