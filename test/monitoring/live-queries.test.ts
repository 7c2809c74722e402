/**
 * Dashboards, alerts and the Prometheus Adapter rule of the chart
 * (charts/recognition-operator/files/monitoring/) against a real Prometheus that scrapes,
 * every second, what they are written for:
 *   - the API (startServer, METRICS_PORT) on real PostgreSQL and Redis, inferring on
 *   - real Triton (tritonserver of nvidia-pytriton, its metrics port: the nv_* series),
 *   - the operator reconciling RecognitionServices on a private kube-apiserver,
 * each labelled (namespace, pod, service, job) as a ServiceMonitor's relabeling labels it.
 * k6 runs the repo's smoke scenario plus refused requests, writing to Prometheus through its
 * remote-write output; the test adds the failure paths the alerts watch (an overload 5xx,
 * bad image-link signatures, a cut link to Triton) so that their series exist.
 * Then: every panel query returns data (GPU panels: none, there is no GPU here); every
 * rule is accepted, evaluates cleanly, and each of its selectors matches a series; the
 * adapter's metricsQuery gives one value per Triton pod. Failures name the dashboard and
 * panel, or the rule.
 *   node --import tsx --test test/monitoring/live-queries.test.ts
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { HmacImageUrlSigner } from '../../src/images/signed-url.js';
import { eventually } from '../helpers/eventually.js';
import { FIXTURE_IMAGES, REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { startImageServer } from '../helpers/image-server.js';
import { findBinary, freePort } from '../helpers/local-server.js';
import { prometheusTools, PromQueryError, startPrometheus, type PrometheusServer, type ScrapeTarget } from '../helpers/prometheus.js';
import { pythonEnv, startRealTriton } from '../helpers/python-env.js';
import { findTools } from '../operator/helpers/cluster.js';
import { panelTargets, resolveVariables, interpolate, type Dashboard } from './helpers/grafana.js';
import { startLink } from './helpers/link.js';
import { vectorSelectors } from './helpers/promql.js';
import { IMAGE_URL_SECRET, startApiTarget, startOperatorTarget, type ApiTarget } from './helpers/targets.js';

const MONITORING = path.join(REPO_ROOT, 'charts', 'recognition-operator', 'files', 'monitoring');
const NS = 'recognition';
const OPERATOR_NS = 'recognition-system';
const MODEL = 'centernet';
/**
 * Pod names as Deployments make them; the job is the Service's name (the chart's and the
 * operator's); targetLabels the Service label the ServiceMonitors copy onto every series
 * (src/operator/desired/policies.ts, templates/servicemonitor.yaml), which the rules,
 * dashboards and adapter rule select on.
 */
const OURS = { app_kubernetes_io_name: 'recognition-service' };
const API = { service: 'vision-api', pod: 'vision-api-7f9c6d5b8-x2kqp', container: 'api', targetLabels: OURS };
const TRITON = { service: 'vision-triton', pod: 'vision-triton-5c8d7b9f4-m4n7z', container: 'triton', targetLabels: OURS };
const OPERATOR = { service: 'recognition-operator-metrics', pod: 'recognition-operator-6d5f8c7b9-q8w2r', container: 'operator', targetLabels: { app_kubernetes_io_name: 'recognition-operator' } };
const JOBS = [API.service, TRITON.service, OPERATOR.service];

const python = pythonEnv();
const { tools, missing: k8sMissing } = findTools();
const k6 = findBinary('k6', 'k6', 'K8S_TOOLS_BIN');
const skip = 'skip' in python ? python.skip : !tools ? k8sMissing : 'skip' in k6 ? k6.skip : false;
if (skip) console.log(`# live monitoring queries skipped: ${skip}`);

interface RuleEntry {
  group: string;
  kind: 'alert' | 'record';
  name: string;
  expr: string;
}

function readRules(): { rules: RuleEntry[]; doc: { groups: Array<{ name: string; interval?: string; rules: Array<Record<string, unknown>> }> } } {
  const doc = parse(readFileSync(path.join(MONITORING, 'rules.yaml'), 'utf8')) as { groups: Array<{ name: string; interval?: string; rules: Array<Record<string, unknown>> }> };
  const rules = doc.groups.flatMap((g) =>
    g.rules.map((r) => ({
      group: g.name,
      kind: typeof r.alert === 'string' ? ('alert' as const) : ('record' as const),
      name: String(r.alert ?? r.record),
      expr: String(r.expr),
    })),
  );
  return { rules, doc };
}

/** Every object with a metricsQuery in the adapter values (rules.custom, .resource, .external). */
function adapterRules(node: unknown, out: Array<{ seriesQuery?: string; metricsQuery: string; name?: { as?: string } }> = []) {
  if (Array.isArray(node)) for (const n of node) adapterRules(n, out);
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (typeof o.metricsQuery === 'string') out.push(o as never);
    else for (const v of Object.values(o)) adapterRules(v, out);
  }
  return out;
}

const now = () => Date.now() / 1000;
/** The k6 run (smoke and the refused scenario) ends well inside this, and inside the suite's limit. */
const K6_DEADLINE_MS = 180_000;

describe('dashboards, alerts and the adapter rule on a real Prometheus', { skip, timeout: 300_000 }, () => {
  const testid = `live-${Date.now().toString(36)}`;
  const cleanups: Array<() => Promise<void>> = [];
  let prom: PrometheusServer;
  let api: ApiTarget;
  let link: Awaited<ReturnType<typeof startLink>>;
  let started = 0;
  /** The instant every query is evaluated at: after the load, once every target was scraped since. */
  let at = 0;
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

  before(async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'recog-live-queries-'));
    cleanups.push(async () => rmSync(work, { recursive: true, force: true }));
    const tritonMetricsPort = await freePort();
    // The slow starts side by side: Triton loading the model, the control plane and the operator.
    const [triton, operator] = await Promise.allSettled([
      startRealTriton((python as { python: string }).python, { metricsPort: tritonMetricsPort }),
      startOperatorTarget(tools!, NS, OPERATOR_NS),
    ]);
    if (triton.status === 'fulfilled') cleanups.push(() => triton.value.stop());
    if (operator.status === 'fulfilled') cleanups.push(() => operator.value.stop());
    if (triton.status === 'rejected') throw triton.reason;
    if (operator.status === 'rejected') throw operator.reason;
    link = await startLink(triton.value.grpcPort);
    cleanups.push(() => link.close());
    api = await startApiTarget(link.address, MODEL);
    cleanups.push(() => api.stop());
    console.log(`# targets up after ${elapsed()}`);

    // The rule file as the chart ships it, evaluated every second instead of each group's
    // interval, so recorded series exist within the test's time.
    const { doc } = readRules();
    for (const g of doc.groups) g.interval = '1s';
    const rulesFile = path.join(work, 'rules.yaml');
    writeFileSync(rulesFile, stringify(doc));
    const target = (t: typeof API, namespace: string, address: string, honorLabels = false): ScrapeTarget => ({ ...t, namespace, address, honorLabels });
    started = Math.floor(now()) - 1;
    prom = await startPrometheus((await prometheusTools()).prometheus, {
      targets: [
        target(API, NS, api.metricsAddress),
        target(TRITON, NS, `127.0.0.1:${tritonMetricsPort}`),
        // As the chart's operator ServiceMonitor: honorLabels keeps the resources' own namespace.
        target(OPERATOR, OPERATOR_NS, operator.value.metricsAddress, true),
      ],
      ruleFiles: [rulesFile],
    });
    cleanups.push(() => prom.stop());
  });

  after(async () => {
    const failures = (await Promise.allSettled(cleanups.reverse().map((c) => c()))).filter((r) => r.status === 'rejected');
    console.log(`# whole run ${elapsed()}`);
    for (const f of failures) console.log(`# cleanup failed: ${String((f).reason)}`);
  });

  test('load: k6 (smoke + refused requests) into remote write, then the failure paths', async () => {
    await eventually(async () => {
      const body = (await (await fetch(`${api.baseUrl}/readyz`)).json()) as { checks?: Record<string, string> };
      return body.checks?.inference === 'ok';
    }, { what: 'the API ready on Triton', timeoutMs: 60_000, intervalMs: 250 });

    const images = await startImageServer();
    cleanups.push(() => images.close());
    const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'recog-live-k6-'));
    cleanups.push(async () => rmSync(resultsDir, { recursive: true, force: true }));
    // k6 leads its own group: on its deadline, or whatever ends the test first, the group is
    // killed (the cleanup below), so no k6 outlives the file.
    const k6run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn((k6 as { bin: string }).bin, ['run', '--no-usage-report', '--address', '', '--quiet', '-o', 'experimental-prometheus-rw', '--tag', `testid=${testid}`, 'test/monitoring/k6-live.js'], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          K6_NO_USAGE_REPORT: 'true',
          K6_PROMETHEUS_RW_SERVER_URL: `${prom.url}/api/v1/write`,
          K6_PROMETHEUS_RW_TREND_STATS: 'p(50),p(95),p(99),avg,max',
          K6_PROMETHEUS_RW_PUSH_INTERVAL: '1s',
          BASE_URL: api.baseUrl,
          IMAGE_BASE_URL: images.url('/images'),
          FIXTURES_DIR: FIXTURE_IMAGES,
          RESULTS_DIR: resultsDir,
          SCENARIO: 'live-monitoring',
          API_KEY: api.keys.api,
          OTHER_KEY: api.keys.other,
          QUOTA_KEY: api.keys.quota,
          BALANCE_KEY: api.keys.balance,
        },
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const kill = () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      cleanups.push(async () => kill());
      const deadline = setTimeout(() => {
        kill();
        reject(new Error(`k6 did not end within ${K6_DEADLINE_MS / 1000} s; killed:\n${output.slice(-6000)}`));
      }, K6_DEADLINE_MS);
      child.once('error', reject);
      child.once('exit', (code) => {
        clearTimeout(deadline);
        resolve({ code, output });
      });
    });
    // The failed checks first: the summary's tail alone may not reach them.
    const failedChecks = k6run.output.split('\n').filter((l) => /✗|crossed/.test(l));
    assert.equal(k6run.code, 0, `k6 failed (smoke's thresholds, the refused checks or the run):\n${failedChecks.join('\n')}\n${k6run.output.slice(-6000)}`);
    console.log(`# k6 done after ${elapsed()}`);

    const sync = (key: string) =>
      fetch(`${api.baseUrl}/v1/cv/requests/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ external_id: randomUUID(), image_base64: readFixture('camera.png').toString('base64') }),
      });
    // Overload: more concurrent recognitions than the one slot and the queue of two hold:
    // 503 SERVICE_OVERLOADED, the 5xx of the availability SLO.
    await eventually(async () => {
      const statuses = await Promise.all(Array.from({ length: 6 }, async () => (await sync(api.keys.api)).status));
      return statuses.includes(503);
    }, { what: 'a 503 from a burst', timeoutMs: 60_000 });

    // Image links: one not signed by us (invalid), one we signed that has expired.
    const id = randomUUID();
    const future = Math.floor(now()) + 3600;
    const invalid = await fetch(`${api.baseUrl}/v1/cv/images/${id}?expires=${future}&signature=${'A'.repeat(43)}`);
    const expiredUrl = new HmacImageUrlSigner({ secret: IMAGE_URL_SECRET, publicBaseUrl: api.baseUrl, ttlSeconds: 1 }).sign(id, new Date(Date.now() - 3_600_000));
    const expired = await fetch(expiredUrl);
    assert.ok(invalid.status >= 400 && expired.status >= 400, `bad links refused (${invalid.status}, ${expired.status})`);

    // The link to Triton cut: the recognition ends in ERROR 503 and the gRPC error is counted.
    link.cut();
    const failed = (await (await sync(api.keys.api)).json()) as { status: string; response_code: number };
    assert.equal(failed.status, 'ERROR', JSON.stringify(failed));
    link.restore();

    // Every target scraped at least twice since (a rate needs two samples), the rules
    // evaluated since, and k6's series written.
    const loadEnd = now();
    at = await eventually(async () => {
      // timestamp() of a plain selector is the time of the last scrape.
      const up = await prom.query(`timestamp(up{job=~"${JOBS.join('|')}"})`);
      const healthy = await prom.query(`up{job=~"${JOBS.join('|')}"} == 1`);
      const k6series = await prom.query(`count(k6_http_reqs_total{testid="${testid}"})`);
      const rules = await prom.rules();
      const evaluated = rules.length > 0 && rules.every((r) => Date.parse(r.lastEvaluation) / 1000 > loadEnd + 2);
      const scraped = healthy.length === JOBS.length && up.length === JOBS.length && up.every((r) => Number(r.value[1]) > loadEnd + 2);
      return scraped && k6series.length === 1 && evaluated ? now() : 0;
    }, { what: `every job (${JOBS.join(', ')}) scraped and the rules evaluated after the load, and the k6 series of ${testid}`, timeoutMs: 60_000, intervalMs: 500 });
    console.log(`# series in place after ${elapsed()}`);
  });

  test('every dashboard panel query returns data (GPU panels: none without a GPU)', async () => {
    assert.ok(at > 0, 'the load ran');
    const failures: string[] = [];
    const files = readdirSync(path.join(MONITORING, 'dashboards')).filter((f) => f.endsWith('.json')).sort();
    assert.deepEqual(files, ['api.json', 'k6.json', 'operator.json', 'triton.json']);
    // Every range ($__rate_interval, $__range) covers the whole run, from Prometheus's start to
    // `at`, in whole minutes: k6 writes a series only in flushes that had samples, so its
    // series (the refused scenario's first, which lasts seconds) stop when their requests
    // stop, and how long the smoke, the burst and the cut took after them depends on the
    // machine. A fixed 1m window would leave their rate() panels empty on a slow one.
    const minutes = Math.max(1, Math.ceil((at - started) / 60));
    const runRange = { __rate_interval: `${minutes}m`, __range: `${minutes}m`, __range_s: String(minutes * 60), __range_ms: String(minutes * 60_000) };
    console.log(`# panel ranges: ${minutes}m (the whole run)`);
    let ran = 0;
    for (const file of files) {
      const dashboard = JSON.parse(readFileSync(path.join(MONITORING, 'dashboards', file), 'utf8')) as Dashboard;
      const where = `${file} (${dashboard.title ?? 'untitled'})`;
      let vars: Record<string, string | string[]>;
      try {
        vars = { ...(await resolveVariables(dashboard, (label, match) => prom.labelValues(label, match, started, at), { testid, namespace: NS })), ...runRange };
      } catch (err) {
        failures.push(`${where}: ${(err as Error).message}`);
        continue;
      }
      const targets = panelTargets(dashboard);
      if (targets.length === 0) failures.push(`${where}: no panel queries`);
      for (const t of targets) {
        const expr = interpolate(t.expr, vars);
        const name = `${where} / "${t.panel}" [${t.refId}]`;
        ran++;
        if (/\$/.test(expr.replace(/"[^"]*"/g, ''))) failures.push(`${name}: a variable is left after substitution: ${expr}`);
        let result;
        try {
          result = await prom.query(expr, at);
        } catch (err) {
          failures.push(`${name}: ${err instanceof PromQueryError ? 'refused' : 'failed'}: ${(err as Error).message}\n    ${expr}`);
          continue;
        }
        if (/GPU/.test(t.panel)) {
          if (result.length > 0) failures.push(`${name}: a GPU panel has data on a machine without a GPU: ${JSON.stringify(result[0]?.metric)}`);
          else console.log(`# skipped (no GPU here, empty as expected): ${name}`);
        } else if (result.length === 0) {
          failures.push(`${name}: empty result\n    ${expr}`);
        }
      }
    }
    console.log(`# ${ran} panel queries run`);
    assert.equal(failures.length, 0, `panel queries that failed:\n${failures.join('\n')}`);
  });

  test('the Prometheus Adapter rule gives triton_queue_time_us for each Triton pod', async () => {
    assert.ok(at > 0, 'the load ran');
    const values = parse(readFileSync(path.join(MONITORING, 'prometheus-adapter.yaml'), 'utf8')) as unknown;
    const rules = adapterRules(values);
    const queue = rules.filter((r) => r.name?.as === 'triton_queue_time_us');
    assert.equal(queue.length, 1, 'one rule serves triton_queue_time_us');
    for (const r of rules) {
      const series = /^\s*([A-Za-z_:][A-Za-z0-9_:]*)/.exec(r.seriesQuery ?? '')?.[1] ?? '';
      // What the adapter substitutes for a pods metric in one namespace.
      const q = r.metricsQuery
        .replaceAll('<<.LabelMatchers>>', `namespace="${NS}",pod=~"${TRITON.pod}"`)
        .replaceAll('<<.GroupBy>>', 'pod')
        .replaceAll('<<.Series>>', series);
      const result = await prom.query(q, at).catch((err: Error) => assert.fail(`adapter rule ${r.name?.as ?? series}: ${err.message}\n${q}`));
      assert.deepEqual(
        result.map((s) => s.metric.pod).sort(),
        [TRITON.pod],
        `adapter rule ${r.name?.as ?? series}: one value per Triton pod\n${q}\n${JSON.stringify(result)}`,
      );
      for (const s of result) assert.ok(Number.isFinite(Number(s.value[1])), `a number for ${s.metric.pod}: ${s.value[1]}`);
    }
  });

  test('every rule is accepted, evaluates cleanly, and each of its selectors matches a series', async () => {
    assert.ok(at > 0, 'the load ran');
    const { rules } = readRules();
    const failures: string[] = [];
    const loaded = await prom.rules();
    for (const r of rules) {
      const name = `${r.kind} ${r.name} (group ${r.group})`;
      const live = loaded.filter((l) => l.name === r.name);
      if (live.length === 0) failures.push(`${name}: not loaded by Prometheus`);
      for (const l of live) if (l.health !== 'ok') failures.push(`${name}: evaluation ${l.health}: ${l.lastError ?? ''}`);
      try {
        await prom.query(r.expr, at);
      } catch (err) {
        failures.push(`${name}: query refused: ${(err as Error).message}`);
        continue;
      }
      const { selectors, errors } = vectorSelectors(r.expr);
      if (errors.length > 0) failures.push(`${name}: the PromQL grammar found errors ${errors.join(', ')}`);
      if (selectors.length === 0) failures.push(`${name}: no vector selector found`);
      for (const sel of selectors) {
        const found = await prom.series(sel, started, at);
        // Every series a rule reads, failure counters included, is produced by the load above.
        if (found.length === 0) failures.push(`${name}: no series matches ${sel}`);
      }
    }
    console.log(`# ${rules.length} rules checked (${rules.filter((r) => r.kind === 'alert').length} alerts)`);
    assert.equal(failures.length, 0, `rules that failed:\n${failures.join('\n')}`);
  });
});
