// Threshold builders. Every operation a scenario uses gets its own p95/p99 on its
// `endpoint` tag; declaring them also makes k6 keep those sub-metrics for the report.
import { envNumber } from './config.js';

/** Trend statistics kept for the summary (p99 is not in k6's default list). */
export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'];

/**
 * Per-endpoint latency limits. limits: { endpoint: { p95, p99 } } in ms.
 * abort: stop the test as soon as one breaks (stress), after `delay` of evidence.
 * reportOnly: keep the per-endpoint series for the report, judge no latency.
 */
export function latencyThresholds(limits, { abort = false, delay = '10s', reportOnly = false } = {}) {
  const out = {};
  for (const [endpoint, l] of Object.entries(limits)) {
    // reportOnly keeps the series for the report without judging time (the CI smoke:
    // no timing decides a pass/fail test in this repo).
    const rules = reportOnly ? ['max>=0'] : [`p(95)<${l.p95}`, `p(99)<${l.p99}`];
    out[`http_req_duration{endpoint:${endpoint}}`] = abort
      ? rules.map((threshold) => ({ threshold, abortOnFail: true, delayAbortEval: delay }))
      : rules;
    // Always-true thresholds: they only make k6 keep these series for the report.
    out[`http_reqs{endpoint:${endpoint}}`] = ['count>=0'];
    out[`unexpected_status{endpoint:${endpoint}}`] = ['rate>=0'];
  }
  return out;
}

/** The server's processing_time_ms per endpoint, kept for the report. */
export function processingSeries(endpoints) {
  const out = {};
  for (const e of endpoints) {
    out[`processing_time_ms{endpoint:${e}}`] = ['max>=0'];
    out[`outside_processing_ms{endpoint:${e}}`] = ['max>=0'];
  }
  return out;
}

/**
 * Error-rate and check thresholds. errorRate and checkRate are fractions; strict means
 * "not one failure" (smoke and limits). abort: as in latencyThresholds.
 */
export function correctnessThresholds({ errorRate = 0.01, checkRate = 0.99, strict = false, abort = false, delay = '10s' } = {}) {
  const wrap = (t) => (abort ? { threshold: t, abortOnFail: true, delayAbortEval: delay } : t);
  return {
    http_req_failed: [wrap(strict ? 'rate==0' : `rate<${errorRate}`)],
    unexpected_status: [wrap(strict ? 'rate==0' : `rate<${errorRate}`)],
    checks: [wrap(strict ? 'rate==1' : `rate>${checkRate}`)],
  };
}

/** p95/p99 limits (ms) for the recognition calls, overridable per run: P95_MS, P99_MS. */
export function recognitionLimits(defaults = { p95: 3000, p99: 6000 }) {
  return { p95: envNumber('P95_MS', defaults.p95), p99: envNumber('P99_MS', defaults.p99) };
}

/** p95/p99 limits (ms) for lookup and feedback: LOOKUP_P95_MS, LOOKUP_P99_MS. */
export function lookupLimits(defaults = { p95: 300, p99: 800 }) {
  return { p95: envNumber('LOOKUP_P95_MS', defaults.p95), p99: envNumber('LOOKUP_P99_MS', defaults.p99) };
}
