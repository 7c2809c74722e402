// handleSummary for every scenario: the full k6 summary as JSON plus a short report
// (per-endpoint throughput and latency, the server's processing time, thresholds, failed
// checks) written to RESULTS_DIR and printed. The runner exits non-zero when k6 does
// (a crossed threshold gives exit code 99). SUMMARY_JSON, when set, gets a copy of the
// JSON at a path the runner chose (its regression gate reads it there).
import { RESULTS_DIR, SCENARIO, env } from './config.js';

function fmt(v, digits = 0) {
  if (v === undefined || v === null || Number.isNaN(v)) return '-';
  return Number(v).toFixed(digits);
}

function pad(s, n) {
  s = String(s);
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function lpad(s, n) {
  s = String(s);
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}

/** Tag value of each sub-metric `base{tag:value}` present in the summary. */
function seriesOf(metrics, base, tag) {
  const prefix = `${base}{${tag}:`;
  return Object.keys(metrics)
    .filter((k) => k.startsWith(prefix) && k.endsWith('}') && !k.slice(prefix.length, -1).includes(','))
    .map((k) => k.slice(prefix.length, -1))
    .sort();
}

function values(metrics, name) {
  return metrics[name] ? metrics[name].values : undefined;
}

function allChecks(group, out = []) {
  for (const c of group.checks || []) out.push(c);
  for (const g of group.groups || []) allChecks(g, out);
  return out;
}

/** A latency table row: name, count, rate, median, p95, p99, max. */
function latencyRow(label, trend, count, rate, extra = '') {
  return `${pad(label, 22)}${lpad(fmt(count), 7)}${lpad(fmt(rate, 2), 9)}${lpad(fmt(trend && trend.med), 9)}`
    + `${lpad(fmt(trend && trend['p(95)']), 9)}${lpad(fmt(trend && trend['p(99)']), 9)}${lpad(fmt(trend && trend.max), 9)}${extra}`;
}

/** The short human-readable report. extra(data) may add scenario-specific lines. */
export function textReport(data, extra) {
  const m = data.metrics;
  const seconds = data.state.testRunDurationMs / 1000;
  const lines = [];
  lines.push(`== ${SCENARIO}: ${fmt(seconds, 1)} s, ${fmt(values(m, 'iterations')?.count)} iterations`
    + ` (${fmt(values(m, 'iterations')?.rate, 2)}/s), ${fmt(values(m, 'dropped_iterations')?.count ?? 0)} dropped`);

  const endpoints = seriesOf(m, 'http_req_duration', 'endpoint');
  if (endpoints.length > 0) {
    lines.push('');
    lines.push(`${pad('HTTP endpoint', 22)}${lpad('reqs', 7)}${lpad('req/s', 9)}${lpad('p50 ms', 9)}${lpad('p95 ms', 9)}${lpad('p99 ms', 9)}${lpad('max ms', 9)}  unexpected`);
    for (const e of endpoints) {
      const reqs = values(m, `http_reqs{endpoint:${e}}`);
      const bad = values(m, `unexpected_status{endpoint:${e}}`);
      lines.push(latencyRow(e, values(m, `http_req_duration{endpoint:${e}}`), reqs?.count, reqs?.rate,
        `  ${bad ? `${fmt(bad.rate * 100, 2)}%` : '-'}`));
    }
  }

  const processed = seriesOf(m, 'processing_time_ms', 'endpoint').filter((e) => values(m, `processing_time_ms{endpoint:${e}}`)?.count > 0);
  if (processed.length > 0) {
    lines.push('');
    lines.push(`${pad('server processing_time', 22)}${lpad('n', 7)}${lpad('', 9)}${lpad('p50 ms', 9)}${lpad('p95 ms', 9)}${lpad('p99 ms', 9)}${lpad('max ms', 9)}  outside processing p50/p95`);
    for (const e of processed) {
      const t = values(m, `processing_time_ms{endpoint:${e}}`);
      const o = values(m, `outside_processing_ms{endpoint:${e}}`);
      lines.push(latencyRow(e, t, t.count, undefined, `  ${fmt(o?.med)} / ${fmt(o?.['p(95)'])}`));
    }
  }

  const infer = m['grpc_req_duration{endpoint:model_infer}'];
  if (infer && infer.values.count > 0) {
    const t = infer.values;
    lines.push('');
    lines.push(`${pad('gRPC ModelInfer', 22)}${lpad('calls', 7)}${lpad('call/s', 9)}${lpad('p50 ms', 9)}${lpad('p95 ms', 9)}${lpad('p99 ms', 9)}${lpad('max ms', 9)}`);
    lines.push(latencyRow('inference layer', t, t.count, t.count / seconds));
  }

  if (extra) for (const l of extra(data)) lines.push(l);

  const failedThresholds = [];
  let thresholdCount = 0;
  for (const [name, metric] of Object.entries(m)) {
    for (const [source, t] of Object.entries(metric.thresholds || {})) {
      thresholdCount += 1;
      if (!t.ok) failedThresholds.push(`${name}: ${source}`);
    }
  }
  const checks = allChecks(data.root_group);
  const failedChecks = checks.filter((c) => c.fails > 0);
  const c = values(m, 'checks');
  lines.push('');
  lines.push(`checks: ${fmt(c?.passes)} passed, ${fmt(c?.fails)} failed; http_req_failed ${fmt((values(m, 'http_req_failed')?.rate ?? 0) * 100, 2)}%`);
  for (const f of failedChecks) lines.push(`  FAILED check ${f.name}: ${f.fails} of ${f.passes + f.fails}`);
  lines.push(`thresholds: ${thresholdCount - failedThresholds.length} of ${thresholdCount} passed`);
  for (const f of failedThresholds) lines.push(`  CROSSED ${f}`);
  lines.push(failedThresholds.length === 0 ? 'RESULT: PASS' : 'RESULT: FAIL (thresholds crossed)');
  return lines.join('\n');
}

/** Builds a handleSummary that writes <scenario>-<UTC stamp>.{json,txt} and prints the report. */
export function summaryHandler(extra) {
  return function handleSummary(data) {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z');
    const base = `${RESULTS_DIR}/${SCENARIO}-${stamp}`;
    const report = textReport(data, extra);
    const json = JSON.stringify(data, null, 2);
    const out = {
      stdout: `\n${report}\n\nresults: ${base}.json, ${base}.txt\n`,
      [`${base}.json`]: json,
      [`${base}.txt`]: `${report}\n`,
    };
    const copy = env('SUMMARY_JSON', '');
    if (copy !== '') out[copy] = json;
    return out;
  };
}
