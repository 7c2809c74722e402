/**
 * A real Prometheus server (Debian's 2.42 package, installed by scripts/prometheus.sh) for
 * tests: a generated configuration, a temporary TSDB, loopback only, the remote-write
 * receiver on (k6 writes there), and the HTTP API the tests query. The process leads its
 * own group and is killed with it, whatever the test did.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { eventually } from './eventually.js';
import { freePort } from './local-server.js';

export interface PrometheusTools {
  prometheus: string;
  promtool: string;
}

let tools: Promise<PrometheusTools> | undefined;

/**
 * The paths of `prometheus` and `promtool`, found on first use. scripts/pretest.sh installs
 * Debian's package before the suite (as it does chromium for the browser tests; .ci/run also
 * runs scripts/prometheus.sh in a step of its own). Rejects with what to do when missing.
 */
export function prometheusTools(): Promise<PrometheusTools> {
  return (tools ??= Promise.all([which('prometheus'), which('promtool')]).then(([prometheus, promtool]) => {
    if (!prometheus || !promtool) {
      throw new Error("Prometheus is not installed: run scripts/prometheus.sh (it installs Debian's prometheus package, 2.42), then run again");
    }
    return { prometheus, promtool };
  }));
}

function which(tool: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', `command -v ${tool}`], (err, stdout) => resolve(err ? undefined : stdout.trim() || undefined));
  });
}

/**
 * One scrape target as a ServiceMonitor's generated job sees it: `job` is the Service's name
 * and the relabeling adds namespace, pod, service, container and endpoint, which dashboards,
 * alerts and the Prometheus Adapter select on.
 */
export interface ScrapeTarget {
  /** The Service's name: Prometheus's `job` label. */
  service: string;
  namespace: string;
  pod: string;
  container: string;
  /** host:port on loopback. */
  address: string;
  metricsPath?: string;
  /** The endpoint's honorLabels: a scraped label wins over the target's (else it becomes exported_<label>). */
  honorLabels?: boolean;
  /** What the ServiceMonitor's targetLabels copy from the Service (e.g. app_kubernetes_io_name). */
  targetLabels?: Record<string, string>;
}

function scrapeConfig(t: ScrapeTarget): Record<string, unknown> {
  const set = (label: string, value: string) => ({ target_label: label, replacement: value, action: 'replace' });
  return {
    job_name: `serviceMonitor/${t.namespace}/${t.service}/0`,
    metrics_path: t.metricsPath ?? '/metrics',
    honor_labels: t.honorLabels ?? false,
    static_configs: [{ targets: [t.address] }],
    // What the Prometheus Operator's relabeling of a ServiceMonitor endpoint yields.
    relabel_configs: [set('namespace', t.namespace), set('service', t.service), set('pod', t.pod), set('container', t.container), set('endpoint', 'metrics'), set('job', t.service), ...Object.entries(t.targetLabels ?? {}).map(([k, v]) => set(k, v))],
  };
}

/** A target as file-based discovery lists it: the same labels as scrapeConfig's relabeling. */
function targetGroup(t: ScrapeTarget): Record<string, unknown> {
  return {
    targets: [t.address],
    labels: { namespace: t.namespace, service: t.service, pod: t.pod, container: t.container, endpoint: 'metrics', job: t.service, ...t.targetLabels },
  };
}

export interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

/** A loaded rule as /api/v1/rules reports it (type: alerting or recording). */
export interface PromRule {
  name: string;
  type: string;
  health: string;
  lastError?: string;
  /** RFC 3339; the zero time before the first evaluation. */
  lastEvaluation: string;
}

/** Thrown for a query Prometheus refused (a parse or evaluation error), with its message. */
export class PromQueryError extends Error {}

export interface PrometheusServer {
  url: string;
  /** An instant query; `time` in seconds (default: now). Throws PromQueryError when refused. */
  query(expr: string, time?: number): Promise<PromResult[]>;
  /** Series matching a selector between start and end (seconds). */
  series(match: string, start: number, end: number): Promise<Array<Record<string, string>>>;
  /** Values of a label (on series matching `match`, when given) between start and end (seconds). */
  labelValues(label: string, match: string | undefined, start: number, end: number): Promise<string[]>;
  /** The active targets with their health and last error. */
  targets(): Promise<Array<{ job: string; health: string; lastError: string }>>;
  /** The loaded rules with their health and last evaluation error. */
  rules(): Promise<PromRule[]>;
  /**
   * Replaces the discovered targets (file-based discovery, as pods come and go), beside the
   * static ones; resolves once Prometheus has picked up the new list.
   */
  setTargets(targets: ScrapeTarget[]): Promise<void>;
  log(): string;
  stop(): Promise<void>;
}

async function api<T>(url: string, params: Record<string, string | undefined> = {}): Promise<T> {
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  const res = await fetch(query ? `${url}?${query}` : url, { signal: AbortSignal.timeout(20_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string; errorType?: string };
  if (body.status !== 'success') throw new PromQueryError(`${body.errorType ?? res.status}: ${body.error ?? 'no error message'}`);
  return body.data;
}

/**
 * Starts Prometheus scraping `targets` every second and evaluating `ruleFiles` every second;
 * resolves once /-/ready answers. freePort() closes its probe before Prometheus binds, so
 * another process may take the port in between: then one more try on a new port.
 */
export async function startPrometheus(bin: string, opts: { targets: ScrapeTarget[]; ruleFiles?: string[] }): Promise<PrometheusServer> {
  try {
    return await startOnce(bin, opts);
  } catch (err) {
    if (!/address already in use/.test((err as Error).message)) throw err;
    return startOnce(bin, opts);
  }
}

async function startOnce(bin: string, opts: { targets: ScrapeTarget[]; ruleFiles?: string[] }): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'recog-prometheus-'));
  const port = await freePort();
  const configFile = path.join(dir, 'prometheus.yml');
  const targetsFile = path.join(dir, 'targets.json');
  writeFileSync(targetsFile, '[]');
  writeFileSync(
    configFile,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: opts.ruleFiles ?? [],
      scrape_configs: [
        ...opts.targets.map(scrapeConfig),
        { job_name: 'discovered', metrics_path: '/metrics', file_sd_configs: [{ files: [targetsFile], refresh_interval: '1s' }] },
      ],
    }),
  );
  const child = spawn(
    bin,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
      '--log.level=warn',
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
      rmSync(dir, { recursive: true, force: true });
    })());
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode})`);
        return (await fetch(`${url}/-/ready`)).status === 200;
      },
      { what: 'Prometheus ready', timeoutMs: 60_000, intervalMs: 200 },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output}`, { cause: err });
  }
  return {
    url,
    query: (expr, time) => api<{ result: PromResult[] }>(`${url}/api/v1/query`, { query: expr, time: time?.toString() }).then((d) => d.result),
    series: (match, start, end) => api(`${url}/api/v1/series`, { 'match[]': match, start: String(start), end: String(end) }),
    labelValues: (label, match, start, end) => api(`${url}/api/v1/label/${encodeURIComponent(label)}/values`, { 'match[]': match, start: String(start), end: String(end) }),
    targets: async () =>
      (await api<{ activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> }>(`${url}/api/v1/targets`, { state: 'active' })).activeTargets.map((t) => ({
        job: t.labels.job ?? '',
        health: t.health,
        lastError: t.lastError,
      })),
    rules: async () => (await api<{ groups: Array<{ rules: PromRule[] }> }>(`${url}/api/v1/rules`)).groups.flatMap((g) => g.rules),
    setTargets: async (targets) => {
      // Written whole and renamed into place: discovery never reads half a file.
      writeFileSync(`${targetsFile}.tmp`, JSON.stringify(targets.map(targetGroup)));
      renameSync(`${targetsFile}.tmp`, targetsFile);
      const want = targets.map((t) => t.address).sort();
      await eventually(
        async () => {
          const active = await api<{ activeTargets: Array<{ scrapePool: string; labels: Record<string, string>; discoveredLabels: Record<string, string> }> }>(`${url}/api/v1/targets`, { state: 'active' });
          const have = active.activeTargets.filter((t) => t.scrapePool === 'discovered').map((t) => t.discoveredLabels.__address__).sort();
          return JSON.stringify(have) === JSON.stringify(want);
        },
        { what: `Prometheus discovering ${want.join(', ') || 'no target'}`, timeoutMs: 30_000 },
      );
    },
    log: () => output,
    stop,
  };
}
