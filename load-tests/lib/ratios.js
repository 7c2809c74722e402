// The load runs' regression gates: ratios measured within one run, compared with a stored
// baseline (load-tests/baseline/<scenario>.json: smoke, grpc). Only ratios, never absolute times: this
// machine's speed varies with whatever else runs on it, and a ratio of two things measured
// in the same minute on the same cores cancels most of that.
//
// Plain ECMAScript without k6 or Node imports: k6 loads it for the smoke and grpc reports,
// load-tests/tools/gate.mjs (Node) for the verdict, test/monitoring/smoke-gate.test.ts for
// its unit test. Each gated scenario is one list of ratio definitions (RATIO_SETS); the
// measuring, judging and baseline building below are shared by all of them.

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

/** Endpoint tags of the grpc scenario's two phases (load-tests/scenarios/grpc.js). */
export const GRPC_INFER = 'model_infer';
export const GRPC_API = 'sync_base64';
/** Snapshots of the v2 server's ModelStatistics: before the grpc phase, after it, after the api phase. */
export const V2_SNAPS = ['start', 'grpc', 'api'];
export const V2_FIELDS = ['inferences', 'executions', 'success_count', 'success_ns', 'queue_count', 'queue_ns', 'compute_count', 'compute_ns'];

/**
 * The v2 server's own view of the requests between two snapshots (gauge v2_stat{snap,field}
 * of grpc.js): { n, queue, compute, request (mean ms each), batch (mean size) }, or
 * undefined when a snapshot is missing or nothing was served in between.
 */
export function serverView(metrics, from, to) {
  const v = (snap, field) => stat(metrics, `v2_stat{snap:${snap},field:${field}}`, 'value');
  if (v(from, 'success_count') === undefined || v(to, 'success_count') === undefined) return undefined;
  const diff = (f) => (v(to, f) ?? 0) - (v(from, f) ?? 0);
  const n = diff('success_count');
  if (!(n > 0)) return undefined;
  const mean = (k) => diff(`${k}_ns`) / Math.max(1, diff(`${k}_count`)) / 1e6;
  return { n, queue: mean('queue'), compute: mean('compute'), request: mean('success'), batch: diff('inferences') / Math.max(1, diff('executions')) };
}

const inferTrend = `grpc_req_duration{endpoint:${GRPC_INFER}}`;
const apiTrend = `http_req_duration{endpoint:${GRPC_API}}`;

/**
 * The grpc scenario's ratios: the API next to the inference layer alone (ModelInfer on the
 * same v2 server, same image tensor, same number of callers, phases of equal length) in
 * the same run. The reference is the inference layer, not the in-process model.
 */
export const GRPC_RATIOS = [
  {
    name: 'api_throughput_over_infer',
    better: 'higher',
    what: 'API sync calls / ModelInfer calls (same callers, same phase length)',
    compute: (m) => div(stat(m, apiTrend, 'count'), stat(m, inferTrend, 'count')),
  },
  {
    name: 'api_p50_over_infer_p50',
    better: 'lower',
    what: 'API sync p50 latency / ModelInfer p50',
    compute: (m) => div(stat(m, apiTrend, 'med'), stat(m, inferTrend, 'med')),
  },
  {
    name: 'api_p95_over_infer_p95',
    better: 'lower',
    what: 'API sync p95 latency / ModelInfer p95',
    compute: (m) => div(stat(m, apiTrend, 'p(95)'), stat(m, inferTrend, 'p(95)')),
  },
  {
    name: 'api_mean_over_v2_request',
    better: 'lower',
    what: 'API sync mean latency / v2 server mean request time in the api phase',
    compute: (m) => {
      const sv = serverView(m, 'grpc', 'api');
      return div(stat(m, apiTrend, 'avg'), sv && sv.request);
    },
  },
  {
    name: 'v2_request_api_over_grpc_phase',
    better: 'lower',
    what: 'v2 server mean request time: api phase / grpc phase (what the API asks of it)',
    compute: (m) => {
      const api = serverView(m, 'grpc', 'api');
      const alone = serverView(m, 'start', 'grpc');
      return div(api && api.request, alone && alone.request);
    },
  },
];

/** The ratio definitions of each gated scenario; its baseline is load-tests/baseline/<name>.json. */
export const RATIO_SETS = { smoke: RATIOS, grpc: GRPC_RATIOS };

/** { name: value | undefined } from a k6 summary (the object handleSummary receives). */
export function measureRatios(summary, defs = RATIOS) {
  const metrics = (summary && summary.metrics) || {};
  const out = {};
  // runs.map(measureRatios) passes the index second: only a list picks another scenario.
  for (const r of Array.isArray(defs) ? defs : RATIOS) out[r.name] = r.compute(metrics);
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
 * recorded: free-form facts (when, where, how) stored with it; defs: the scenario's ratios.
 */
export function buildBaseline(runs, previous, recorded, defaultMargin = 1.0, defs = RATIOS) {
  const ratios = {};
  for (const r of defs) {
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

/** Report lines for the grpc summary: each ratio of the API to the inference layer, as measured. */
export function grpcRatioReport(summary) {
  const measured = measureRatios(summary, GRPC_RATIOS);
  const lines = ['', 'ratios of the API to the inference layer (gated by scripts/load.sh grpc --start against load-tests/baseline/grpc.json)'];
  for (const r of GRPC_RATIOS) lines.push(`  ${cell(r.name, 36)}${cell(num(measured[r.name]), 9, true)}  ${r.what}`);
  return lines;
}
