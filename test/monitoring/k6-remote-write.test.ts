/**
 * k6 results in Prometheus, as a user gets them: `scripts/load.sh smoke --start --prometheus
 * URL` runs the real service on its embedded defaults and real k6 with its built-in
 * remote-write output into a real Prometheus (remote-write receiver on, temporary storage,
 * loopback). The run's testid picks its series out, and what Prometheus holds must agree
 * with k6's own summary JSON of the same run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { findBinary } from '../helpers/local-server.js';
import { prometheusTools, startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';

// The k6 binary scripts/k6.sh caches (load.sh finds it there too); without it, outside CI, skip.
const k6 = findBinary('k6', 'k6', 'K6_BIN_DIR');
const skip = 'skip' in k6 ? k6.skip : undefined;
const TIMED_CALLS = 4;
// The service's start (load.sh's START_TIMEOUT), the smoke run and the service's graceful
// stop fit in LOAD_SH_MS, and that inside the suite's limit: a run that hangs is stopped by
// this file, never left running after it.
const START_TIMEOUT_S = 240;
const LOAD_SH_MS = 480_000;
const SUITE_MS = 600_000;

interface Run {
  code: number | null;
  output: string;
}

/**
 * Runs scripts/load.sh to its end (it stops the service it started), output kept for the
 * failure message. It leads its own process group: stop() sends SIGTERM to the group (k6 and
 * node in the foreground end, and load.sh's EXIT trap stops the service and its embedded
 * PostgreSQL, which it started in groups of their own), then SIGKILL if it is still there.
 */
function loadSh(args: string[], env: Record<string, string>): { done: Promise<Run>; stop: () => Promise<void> } {
  const child = spawn(path.join(REPO_ROOT, 'scripts', 'load.sh'), args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // the group is gone
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    signal('SIGTERM');
    // load.sh gives the service 30 s to stop its database before it kills it.
    const timer = setTimeout(() => signal('SIGKILL'), 45_000);
    await closed;
    clearTimeout(timer);
  };
  const done = new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    const timer = setTimeout(() => {
      void stop().then(() => reject(new Error(`scripts/load.sh did not end within ${LOAD_SH_MS / 1000} s; stopped.\n${output}`)));
    }, LOAD_SH_MS);
    void closed.then((code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  return { done, stop };
}

type Values = Record<string, number>;

describe('k6 remote write into Prometheus (scripts/load.sh --prometheus)', { skip, timeout: SUITE_MS }, () => {
  let prom: PrometheusServer;
  let stopLoadSh: (() => Promise<void>) | undefined;
  let run: Run;
  let testid: string;
  let summary: { metrics: Record<string, { values: Values }> };

  before(async () => {
    prom = await startPrometheus((await prometheusTools()).prometheus, { targets: [] });
    const loadRun = loadSh(['smoke', '--start', '--prometheus', `${prom.url}/api/v1/write`], {
      // The ratio gate is not what this test is about, and a short timed phase keeps it quick.
      SMOKE_GATE: '0',
      SMOKE_TIMED_CALLS: String(TIMED_CALLS),
      START_TIMEOUT: String(START_TIMEOUT_S),
      // The service from src/: `npm start` would rebuild dist/ and the packages, which other
      // tests load, in the middle of the suite.
      SERVER_CMD: 'node --import tsx src/server.ts',
    });
    stopLoadSh = loadRun.stop;
    run = await loadRun.done;
    assert.equal(run.code, 0, run.output);
    testid = /testid=(smoke-\d{8}T\d{6}Z)/.exec(run.output)?.[1] ?? assert.fail(`no testid printed:\n${run.output}`);
    const json = /results: (\S+\.json),/.exec(run.output)?.[1] ?? assert.fail(`no results file printed:\n${run.output}`);
    summary = JSON.parse(readFileSync(json, 'utf8')) as typeof summary;
  });
  after(async () => {
    // Whatever happened above (a timeout, a failed assertion), no load.sh, service or
    // embedded PostgreSQL outlives the file.
    await stopLoadSh?.();
    await prom?.stop();
  });

  const scalar = async (expr: string) => {
    const r = await prom.query(expr);
    assert.equal(r.length, 1, `${expr}: ${JSON.stringify(r)}`);
    return Number(r[0].value[1]);
  };

  it('stores every request of the run under its testid, as many as k6 counted', async () => {
    const expected = summary.metrics.http_reqs.values.count;
    assert.ok(expected > 20, `the smoke makes dozens of requests, k6 counted ${expected}`);
    // k6 flushes its last batch when the run ends; Prometheus may take a moment to serve it.
    await eventually(async () => (await scalar(`sum(k6_http_reqs_total{testid="${testid}"})`)) === expected, {
      what: `sum(k6_http_reqs_total{testid="${testid}"}) = ${expected}`,
      timeoutMs: 30_000,
    });
    assert.equal(await scalar(`sum(k6_http_reqs_total{testid="${testid}", endpoint="timed_sync"})`), TIMED_CALLS);
    // Another testid picks out nothing: the tag is what separates runs.
    assert.deepEqual(await prom.query('k6_http_reqs_total{testid="smoke-19700101T000000Z"}'), []);
  });

  it('holds the trend stats p50, p95, p99, avg and max, equal to the summary (in seconds)', async () => {
    const sel = `testid="${testid}", endpoint="timed_sync"`;
    const mine = summary.metrics['http_req_duration{endpoint:timed_sync}'].values;
    for (const [stat, key] of [['p50', 'med'], ['p95', 'p(95)'], ['p99', 'p(99)'], ['avg', 'avg'], ['max', 'max']] as const) {
      const seconds = await scalar(`k6_http_req_duration_${stat}{${sel}}`);
      assert.ok(Math.abs(seconds * 1000 - mine[key]) < 0.01, `${stat}: Prometheus ${seconds * 1000} ms, k6's summary ${mine[key]} ms`);
    }
    // Order holds in every series of the run (the same labels on both sides of each comparison).
    for (const [lo, hi] of [['p50', 'p95'], ['p95', 'p99'], ['p99', 'max']]) {
      const broken = await prom.query(`k6_http_req_duration_${lo}{testid="${testid}"} > k6_http_req_duration_${hi}{testid="${testid}"}`);
      assert.deepEqual(broken, [], `${lo} above ${hi}`);
    }
    // The scenario's own trends go too (the server's processing time per call).
    assert.ok((await scalar(`k6_processing_time_ms_p95{${sel}}`)) > 0);
  });
});
