/**
 * Static checks of the Grafana dashboards the chart ships (files/monitoring/dashboards/):
 * they load, they can be installed side by side, every panel asks the `${datasource}`
 * variable, every query names series that exist, nothing is pinned to one namespace.
 * Whether each query returns data from a real Prometheus is test/monitoring/live-queries.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { OperatorMetrics } from '../../src/operator/metrics.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

interface Target {
  refId: string;
  expr?: string;
  datasource?: unknown;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: unknown;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  fieldConfig?: { defaults?: { unit?: string } };
}
interface Variable {
  name: string;
  type: string;
  query: unknown;
  definition?: string;
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

const DIR = path.join(REPO_ROOT, 'charts/recognition-operator/files/monitoring/dashboards');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const DASHBOARDS = new Map(FILES.map((f) => [f, JSON.parse(readFileSync(path.join(DIR, f), 'utf8')) as Dashboard]));
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** The variables queries may use, and nothing else: the live-query test substitutes exactly these. */
const ALLOWED_VARIABLES = new Set(['namespace', 'job', 'pod', 'model', 'testid', '__rate_interval', '__interval']);

const dashboard = (file: string): Dashboard => DASHBOARDS.get(file) ?? assert.fail(`${file} is missing`);
const queryPanels = (d: Dashboard): Panel[] => d.panels.filter((p) => p.type !== 'row');
const exprs = (d: Dashboard): string[] => queryPanels(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
/** Every `name{matchers}` selector of an expression (each query here names its series with a selector). */
const selectors = (expr: string): Array<{ name: string; matchers: string }> =>
  [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)].map((m) => ({ name: m[1], matchers: m[2] }));
const queried = (d: Dashboard): Set<string> => new Set(exprs(d).flatMap((e) => selectors(e).map((s) => s.name)));
const baseName = (name: string): string => name.replace(/_(bucket|count|sum)$/, '');

test('the four dashboards of the agreed layout, with distinct fixed uids and titles', () => {
  assert.deepEqual(FILES, ['api.json', 'k6.json', 'operator.json', 'triton.json']);
  const uids = [...DASHBOARDS.values()].map((d) => d.uid);
  assert.deepEqual(uids, ['recognition-service', 'recognition-k6', 'recognition-operator', 'recognition-triton'], 'uids never change: links and bookmarks use them');
  assert.equal(new Set([...DASHBOARDS.values()].map((d) => d.title)).size, FILES.length);
});

for (const [file, d] of DASHBOARDS) {
  describe(file, () => {
    test('a `datasource` variable of type prometheus, asked by every panel and every query', () => {
      const ds = d.templating.list.find((v) => v.name === 'datasource');
      assert.equal(ds?.type, 'datasource');
      assert.equal(ds?.query, 'prometheus');
      for (const p of queryPanels(d)) {
        assert.deepEqual(p.datasource, DATASOURCE, `panel "${p.title}"`);
        for (const t of p.targets ?? []) assert.deepEqual(t.datasource, DATASOURCE, `panel "${p.title}" query ${t.refId}`);
      }
      for (const v of d.templating.list.filter((x) => x.type === 'query')) {
        assert.deepEqual((v as unknown as { datasource: unknown }).datasource, DATASOURCE, `variable ${v.name}`);
      }
    });

    test('every panel has queries with an expr, a unit and a description', () => {
      assert.ok(queryPanels(d).length >= 8, `${queryPanels(d).length} panels`);
      for (const p of queryPanels(d)) {
        assert.ok(p.targets && p.targets.length > 0, `panel "${p.title}" has queries`);
        for (const t of p.targets) assert.ok(t.expr && t.expr.trim().length > 0, `panel "${p.title}" query ${t.refId} has an expr`);
        assert.equal(new Set(p.targets.map((t) => t.refId)).size, p.targets.length, `panel "${p.title}": unique refIds`);
        assert.ok(p.fieldConfig?.defaults?.unit, `panel "${p.title}" sets a unit`);
        assert.ok((p.description ?? '').length >= 20, `panel "${p.title}" says what it shows`);
      }
    });

    test('unique panel ids; panels fit the 24-column grid without overlapping', () => {
      const ids = d.panels.map((p) => p.id);
      assert.equal(new Set(ids).size, ids.length);
      const cells = new Set<string>();
      for (const p of d.panels) {
        assert.ok(p.gridPos.x >= 0 && p.gridPos.x + p.gridPos.w <= 24, `"${p.title}" fits the grid`);
        for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
          for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
            assert.ok(!cells.has(`${x},${y}`), `"${p.title}" overlaps another panel at ${x},${y}`);
            cells.add(`${x},${y}`);
          }
        }
      }
    });

    test('queries use only the agreed variables, each defined by the dashboard or Grafana', () => {
      const defined = new Set(d.templating.list.map((v) => v.name));
      const used = new Set(exprs(d).flatMap((e) => [...e.matchAll(/\$\{?(\w+)/g)].map((m) => m[1])));
      for (const name of used) {
        assert.ok(ALLOWED_VARIABLES.has(name), `$${name} is not one of ${[...ALLOWED_VARIABLES].join(', ')}`);
        assert.ok(name.startsWith('__') || defined.has(name), `$${name} is a variable of ${file}`);
      }
      // A variable's own query may only refer to variables defined before it.
      const seen = new Set<string>();
      for (const v of d.templating.list) {
        for (const m of (v.definition ?? '').matchAll(/\$(\w+)/g)) assert.ok(seen.has(m[1]), `variable ${v.name} uses $${m[1]} before it is defined`);
        seen.add(v.name);
      }
    });

    test('no hard-coded namespace: namespace matchers only ever take $namespace', () => {
      for (const e of exprs(d)) {
        for (const m of e.matchAll(/\bnamespace\s*(=~|=|!=|!~)\s*"([^"]*)"/g)) {
          assert.deepEqual([m[1], m[2]], ['=~', '$namespace'], `in ${e}`);
        }
      }
    });
  });
}

/** The operator's series about each RecognitionService, labelled with the resource's namespace. */
const PER_RESOURCE = new Set(['recognition_operator_resource_condition', 'recognition_operator_rollout_phase', 'recognition_operator_rollout_canary_weight']);

test('every series of the API, Triton and operator dashboards is filtered by $namespace; k6 series by $testid', () => {
  for (const file of ['api.json', 'triton.json', 'operator.json', 'k6.json']) {
    for (const e of exprs(dashboard(file))) {
      for (const s of selectors(e)) {
        if (s.name.startsWith('k6_')) assert.match(s.matchers, /testid=~"\$testid"/, `${file}: ${s.name} (k6 writes no namespace; the run is its testid)`);
        // Their namespace label is the RecognitionService's, not the scraped operator's: these
        // panels filter by the operator's job and pod (which $namespace already narrows).
        else if (PER_RESOURCE.has(s.name)) assert.match(s.matchers, /job=~"\$job", pod=~"\$pod"/);
        else assert.match(s.matchers, /namespace=~"\$namespace"/, `${file}: ${s.name} in ${e}`);
        // Ours only: the label the ServiceMonitors copy from the Services (another Triton or
        // operator in the same Prometheus exports the same names).
        if (!s.name.startsWith('k6_')) {
          const ours = file === 'operator.json' ? 'recognition-operator' : 'recognition-service';
          assert.match(s.matchers, new RegExp(`app_kubernetes_io_name="${ours}"`), `${file}: ${s.name} in ${e}`);
        }
      }
    }
  }
  for (const file of ['api.json', 'triton.json', 'operator.json', 'k6.json']) {
    for (const v of dashboard(file).templating.list) {
      if (v.type === 'query' && !/k6_/.test(v.definition ?? '')) assert.match(v.definition ?? '', /app_kubernetes_io_name="recognition-(service|operator)"/, `${file}: variable ${v.name}`);
    }
  }
});

test('api.json queries only series src/telemetry/metrics.ts exports, the two limit and link series among them', async () => {
  const m = new Metrics();
  m.watchPool(() => ({ used: 0, free: 0, pending: 0 }));
  const exported = new Set((await m.registry.getMetricsAsJSON()).map((x) => x.name));
  const names = queried(dashboard('api.json'));
  for (const name of names) assert.ok(exported.has(name) || exported.has(baseName(name)), `${name} is exported by the API`);
  for (const needed of ['http_request_duration_seconds', 'http_requests_in_flight', 'recognitions_total', 'rejections_total', 'inference_duration_seconds', 'organisation_limit_rejections_total', 'image_url_signature_failures_total', 'triton_grpc_errors_total', 'limiter_degraded', 'db_pool_connections']) {
    assert.ok([...names].some((n) => baseName(n) === needed), `a panel shows ${needed}`);
  }
});

test('operator.json shows every series the operator exports, and only those', async () => {
  const m = new OperatorMetrics({ defaultMetrics: true });
  m.reportConditionsOf(() => []);
  const all = (await m.registry.getMetricsAsJSON()).map((x) => x.name);
  const exported = new Set(all);
  const names = queried(dashboard('operator.json'));
  for (const name of names) assert.ok(exported.has(name) || exported.has(baseName(name)), `${name} is exported by the operator`);
  // Every series of its own (the process defaults carry the recognition_operator_ prefix but are not all worth a panel).
  const own = all.filter((n) => !/^recognition_operator_(process|nodejs)_/.test(n));
  for (const name of own) assert.ok([...names].some((n) => baseName(n) === name), `a panel shows ${name}`);
});

test('triton.json queries the series tritonserver 2.51 exports on :8002, GPU panels named so', () => {
  // Read from a real tritonserver (nvidia-pytriton, CPU only) serving the model after a few
  // inferences; the GPU series are Triton's documented ones, absent on a machine without GPU.
  const cpu = ['nv_inference_request_success', 'nv_inference_request_failure', 'nv_inference_count', 'nv_inference_exec_count', 'nv_inference_request_duration_us', 'nv_inference_queue_duration_us', 'nv_inference_compute_input_duration_us', 'nv_inference_compute_infer_duration_us', 'nv_inference_compute_output_duration_us', 'nv_inference_pending_request_count', 'nv_cpu_utilization', 'nv_cpu_memory_used_bytes', 'nv_cpu_memory_total_bytes'];
  const gpu = ['nv_gpu_utilization', 'nv_gpu_memory_used_bytes', 'nv_gpu_memory_total_bytes', 'nv_gpu_power_usage'];
  const d = dashboard('triton.json');
  assert.deepEqual([...queried(d)].sort(), [...cpu, ...gpu].sort());
  for (const p of queryPanels(d)) {
    const onGpu = (p.targets ?? []).some((t) => /\bnv_gpu_/.test(t.expr ?? ''));
    assert.equal(/\bGPU\b/.test(p.title), onGpu, `"${p.title}": GPU in the title exactly when it queries GPU series (the live test expects those empty)`);
  }
});

test("triton.json's queue-time panel is the Prometheus Adapter's triton_queue_time_us query", () => {
  const adapter = parse(readFileSync(path.join(DIR, '..', 'prometheus-adapter.yaml'), 'utf8')) as { rules: { custom: Array<{ name: { as: string }; metricsQuery: string }> } };
  const rule = adapter.rules.custom.find((r) => r.name.as === 'triton_queue_time_us') ?? assert.fail('the adapter serves triton_queue_time_us');
  const matchers = 'namespace=~"$namespace", job=~"$job", pod=~"$pod"';
  // The adapter asks per pod: <<.GroupBy>> is namespace, pod; the dashboard narrows by its variables.
  const expected = rule.metricsQuery.replaceAll('<<.GroupBy>>', 'namespace, pod').replaceAll('<<.LabelMatchers>>', matchers);
  const squash = (e: string): string => e.replace(/\s+/g, '');
  const panel = queryPanels(dashboard('triton.json')).find((p) => (p.targets ?? []).some((t) => squash(t.expr ?? '') === squash(expected)));
  assert.ok(panel, `a panel queries ${expected}`);
  assert.match(panel.title, /HPA/);
});

test('k6.json queries the series the experimental-prometheus-rw output writes, beside the API view', () => {
  // Names written by k6 v1.8 with K6_PROMETHEUS_RW_TREND_STATS="p(50),p(95),p(99),avg,max".
  const trends = ['p50', 'p95', 'p99', 'avg', 'max'].map((s) => `k6_http_req_duration_${s}`);
  const k6 = new Set(['k6_http_reqs_total', 'k6_http_req_failed_rate', 'k6_checks_rate', 'k6_vus', 'k6_vus_max', 'k6_iterations_total', 'k6_data_sent_total', 'k6_data_received_total', ...trends]);
  const d = dashboard('k6.json');
  const names = queried(d);
  for (const name of names) assert.ok(k6.has(name) || ['http_request_duration_seconds', 'rejections_total'].includes(baseName(name)), `${name} is written by k6 or the API`);
  for (const name of k6) assert.ok(names.has(name), `a panel shows ${name}`);
  assert.ok(names.has('http_request_duration_seconds_count') && names.has('http_request_duration_seconds_bucket'), "the service's own rate and latency");
  assert.ok(d.templating.list.some((v) => v.name === 'testid' && v.definition === 'label_values(k6_http_reqs_total, testid)'));
});
