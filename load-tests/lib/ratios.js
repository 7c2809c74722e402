// The smoke run's regression gate: ratios measured within one run, compared with a stored
// baseline (load-tests/baseline/smoke.json). Only ratios, never absolute times: this
// machine's speed varies with whatever else runs on it, and a ratio of two things measured
// in the same minute on the same cores cancels most of that.
//
// Plain ECMAScript without k6 or Node imports: k6 loads it for the smoke report,
// load-tests/tools/gate.mjs (Node) for the verdict, test/monitoring/smoke-gate.test.ts for
// its unit test.

/** Endpoint tags of the smoke's timed phase (load-tests/scenarios/smoke.js). */
export const TIMED_SYNC = 'timed_sync';
export const TIMED_LOOKUP = 'timed_lookup';
/** One sample per run: the model's mean inference time over the timed sync calls, from /metrics. */
export const MODEL_METRIC = 'timed_model_inference_ms';
/** One sample per run: wall time of the timed sync calls, back to back. */
export const PHASE_METRIC = 'timed_sync_phase_ms';
export const PHASE_CALLS_METRIC = 'timed_sync_calls';

function stat(metrics, name, key) {
  const m = metrics[name];
  const v = m && m.values ? m.values[key] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function div(a, b) {
  return a === undefined || b === undefined || b <= 0 ? undefined : a / b;
}

/**
 * The gated ratios. better: which way is good ('lower' for latency ratios, 'higher' for
 * throughput). Every one is relative to the bare model's inference time in the same run.
 */
export const RATIOS = [
  {
    name: 'sync_p50_over_model',
    better: 'lower',
    what: 'API sync p50 latency / model inference mean',
    compute: (m) => div(stat(m, `http_req_duration{endpoint:${TIMED_SYNC}}`, 'med'), stat(m, MODEL_METRIC, 'avg')),
  },
  {
    name: 'sync_p95_over_model',
    better: 'lower',
    what: 'API sync p95 latency / model inference mean',
    compute: (m) => div(stat(m, `http_req_duration{endpoint:${TIMED_SYNC}}`, 'p(95)'), stat(m, MODEL_METRIC, 'avg')),
  },
  {
    name: 'sync_throughput_over_model',
    better: 'higher',
    what: 'API sync calls/s (1 caller) / model inferences/s (1 / mean)',
    compute: (m) => {
      // Both rates per millisecond: calls / phase wall time, and 1 / mean inference.
      const api = div(stat(m, PHASE_CALLS_METRIC, 'count'), stat(m, PHASE_METRIC, 'avg'));
      return div(api, div(1, stat(m, MODEL_METRIC, 'avg')));
    },
  },
  {
    name: 'processing_p50_over_model',
    better: 'lower',
    what: 'server processing_time_ms p50 (decode, resize, inference) / model inference mean',
    compute: (m) => div(stat(m, `processing_time_ms{endpoint:${TIMED_SYNC}}`, 'med'), stat(m, MODEL_METRIC, 'avg')),
  },
  {
    name: 'outside_processing_p50_over_model',
    better: 'lower',
    what: 'sync latency outside processing p50 (HTTP, auth, database, storage) / model inference mean',
    compute: (m) => div(stat(m, `outside_processing_ms{endpoint:${TIMED_SYNC}}`, 'med'), stat(m, MODEL_METRIC, 'avg')),
  },
  {
    name: 'lookup_p50_over_model',
    better: 'lower',
    what: 'lookup p50 latency / model inference mean',
    compute: (m) => div(stat(m, `http_req_duration{endpoint:${TIMED_LOOKUP}}`, 'med'), stat(m, MODEL_METRIC, 'avg')),
  },
];

/** { name: value | undefined } from a k6 summary (the object handleSummary receives). */
export function measureRatios(summary) {
  const metrics = (summary && summary.metrics) || {};
  const out = {};
  for (const r of RATIOS) out[r.name] = r.compute(metrics);
  return out;
}

/**
 * The worst value a ratio may take. margin is relative and symmetric in log space:
 * 0.5 allows 1.5 × the baseline for a 'lower' ratio and baseline / 1.5 for a 'higher' one.
 */
export function allowedValue(entry) {
  const factor = 1 + entry.margin;
  return entry.better === 'higher' ? entry.value / factor : entry.value * factor;
}

/**
 * Compares measured ratios with the baseline's. A ratio the baseline names but the run did
 * not measure fails (the measurement itself broke); one the baseline lacks is reported
 * but not judged. Returns { ok, rows: [{ name, better, baseline, measured, allowed, status }] }.
 */
export function compareRatios(measured, baseline) {
  const rows = [];
  const entries = (baseline && baseline.ratios) || {};
  for (const [name, entry] of Object.entries(entries)) {
    const value = measured[name];
    const allowed = allowedValue(entry);
    let status;
    if (value === undefined || value === null || !Number.isFinite(value)) status = 'NOT MEASURED';
    else if (entry.better === 'higher' ? value < allowed : value > allowed) status = 'REGRESSED';
    else status = 'ok';
    rows.push({ name, better: entry.better, baseline: entry.value, measured: value, allowed, status });
  }
  for (const [name, value] of Object.entries(measured)) {
    if (!(name in entries)) rows.push({ name, better: undefined, baseline: undefined, measured: value, allowed: undefined, status: 'no baseline' });
  }
  return { ok: rows.every((r) => r.status === 'ok' || r.status === 'no baseline'), rows };
}

function num(v) {
  return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(3) : '-';
}

function cell(s, n, right) {
  s = String(s);
  if (s.length >= n) return s;
  return right ? ' '.repeat(n - s.length) + s : s + ' '.repeat(n - s.length);
}

/** The verdict table: ratio, baseline, measured, allowed (with its direction), status. */
export function formatComparison(result) {
  const lines = [`${cell('ratio', 36)}${cell('baseline', 10, true)}${cell('measured', 10, true)}${cell('allowed', 12, true)}  status`];
  for (const r of result.rows) {
    const bound = r.allowed === undefined ? '-' : `${r.better === 'higher' ? '>=' : '<='} ${num(r.allowed)}`;
    lines.push(`${cell(r.name, 36)}${cell(num(r.baseline), 10, true)}${cell(num(r.measured), 10, true)}${cell(bound, 12, true)}  ${r.status}`);
  }
  return lines.join('\n');
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * A new baseline from one or more runs' measured ratios: the median of each, its observed
 * range, and the margin kept from the previous baseline (else defaultMargin).
 * recorded: free-form facts (when, where, how) stored with it.
 */
export function buildBaseline(runs, previous, recorded, defaultMargin = 1.0) {
  const ratios = {};
  for (const r of RATIOS) {
    const values = runs.map((run) => run[r.name]).filter((v) => typeof v === 'number' && Number.isFinite(v));
    if (values.length === 0) throw new Error(`ratio ${r.name} was not measured in any run`);
    const old = previous && previous.ratios ? previous.ratios[r.name] : undefined;
    ratios[r.name] = {
      value: Number(median(values).toFixed(4)),
      better: r.better,
      margin: old && typeof old.margin === 'number' ? old.margin : defaultMargin,
      what: r.what,
      observed: { runs: values.length, min: Number(Math.min(...values).toFixed(4)), max: Number(Math.max(...values).toFixed(4)) },
    };
  }
  return { ...(previous && previous.about ? { about: previous.about } : {}), recorded, ratios };
}

/** Report lines for the smoke summary (summary.js's `extra`): each ratio as measured. */
export function ratioReport(summary) {
  const measured = measureRatios(summary);
  const m = (summary && summary.metrics) || {};
  const lines = ['', `timed phase: ${stat(m, PHASE_CALLS_METRIC, 'count') ?? '-'} sync calls in ${Math.round(stat(m, PHASE_METRIC, 'avg') ?? NaN)} ms;`
    + ` model inference mean ${num(stat(m, MODEL_METRIC, 'avg'))} ms (the service's inference_duration_seconds)`,
  'ratios to the bare model (gated by scripts/load.sh against load-tests/baseline/smoke.json)'];
  for (const r of RATIOS) lines.push(`  ${cell(r.name, 36)}${cell(num(measured[r.name]), 9, true)}  ${r.what}`);
  return lines;
}
