/**
 * The Kubernetes objects that run one scenario of load-tests/ through Grafana's k6
 * operator: a ConfigMap holding the scenario as a `k6 archive` (one file, the scenario, its
 * lib/ imports and the fixture images it opens) and a k6.io/v1alpha1 TestRun that runs it
 * on `parallelism` runner pods.
 *
 * Pure functions of their options, so the committed samples in deploy/k6-operator/ can be
 * compared with what this renders. Facts about the operator that shape them (its public
 * documentation and source):
 * - spec.script.configMap {name, file}: the whole ConfigMap is mounted read-only at /test
 *   and the runners run `k6 run … /test/<file>`. ConfigMap keys cannot hold directories,
 *   which is why the script is an archive: k6 resolves lib/ imports inside it.
 * - runner i of N (1-based) gets `--execution-segment=(i-1)/N:i/N` and
 *   `--execution-segment-sequence=0,1/N,…,1`, plus `--tag instance_id=i` and
 *   `--tag testrun_name=<name>`; spec.arguments is split on spaces.
 * - without spec.initializer the initializer pod copies spec.runner and runs
 *   `k6 archive /test/<file> -e NAME="${NAME}" …` for each runner.env entry (not envFrom),
 *   so every variable the script's init context needs is a runner.env entry.
 */
import { stringify } from 'yaml';

export const SCENARIOS = ['smoke', 'load', 'stress', 'spike', 'soak', 'mix', 'limits'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** A key the scenario reads, from the Secret (key name = variable name). */
interface KeyVar {
  name: string;
  optional: boolean;
}

/** The keys each scenario reads (see scripts/load.sh, which provisions the same ones). */
const KEYS: Record<Scenario, KeyVar[]> = {
  smoke: [{ name: 'API_KEY', optional: false }, { name: 'OTHER_KEY', optional: true }],
  load: [{ name: 'API_KEY', optional: false }],
  stress: [{ name: 'API_KEY', optional: false }],
  spike: [{ name: 'API_KEY', optional: false }],
  soak: [{ name: 'API_KEY', optional: false }],
  mix: [{ name: 'API_KEY', optional: false }],
  limits: [{ name: 'LIMITS_KEY', optional: false }, { name: 'QUOTA_KEY', optional: true }],
};

/**
 * Scenarios whose work is one iteration of one VU: split N ways, N−1 runners would idle and
 * the limits scenario's per-key arithmetic would break. They run on one runner.
 */
const SINGLE_RUNNER: ReadonlySet<Scenario> = new Set(['smoke', 'limits']);

/** Trend statistics sent to Prometheus: what the k6 dashboard (dashboards/k6.json) reads. */
export const PROMETHEUS_TREND_STATS = 'p(50),p(95),p(99),avg,max';

/** The k6 image's own user (uid/gid 12345 in grafana/k6): runAsNonRoot needs it numeric. */
const K6_UID = 12345;

/** ConfigMaps are capped at 1 MiB of data (the API server refuses more). */
export const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

export interface RenderOptions {
  scenario: Scenario;
  /** TestRun name; the ConfigMap is `<name>-script`. A DNS label. */
  name: string;
  namespace?: string;
  parallelism: number;
  /** The API as the runner pods reach it, e.g. http://vision-api.vision.svc:8080. */
  baseUrl: string;
  /** Where the API fetches URL-mode images from; the API must be allowed to reach it. */
  imageBaseUrl?: string;
  /** Secret holding the keys, one entry per variable (API_KEY, OTHER_KEY, …). */
  secretName: string;
  /** Value of the `testid` tag on every sample: picks the run out in Prometheus/Grafana. */
  testId: string;
  /** Prometheus remote-write URL (…/api/v1/write); without it no Prometheus output. */
  prometheusUrl?: string;
  runnerImage: string;
  resources: { cpu: string; memory: string };
  /**
   * Scenario settings (RATE, DURATION, OP, …). Options are fixed when the archive is made
   * (k6 stores the evaluated options in it), so the same values go into the archive and
   * into the runners' environment, where the scripts read the rest of them.
   */
  settings: Record<string, string>;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } };
}

/** The subset of the TestRun's schema this renders. */
export interface TestRun {
  apiVersion: 'k6.io/v1alpha1';
  kind: 'TestRun';
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec: {
    parallelism: number;
    separate: boolean;
    cleanup: 'post';
    arguments: string;
    script: { configMap: { name: string; file: string } };
    runner: {
      image: string;
      metadata: { labels: Record<string, string> };
      env: EnvVar[];
      resources: { requests: Record<string, string>; limits: Record<string, string> };
      securityContext: Record<string, unknown>;
      containerSecurityContext: Record<string, unknown>;
      volumes: Record<string, unknown>[];
      volumeMounts: Record<string, unknown>[];
    };
  };
}

export interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace?: string; labels: Record<string, string>; annotations: Record<string, string> };
  binaryData: Record<string, string>;
}

/**
 * Variables that hold credentials: they come from the Secret, never from a flag. A key is a
 * name ending in _KEY or _KEYS (API_KEY, WORKLOAD_KEYS), not any name holding KEY: a count
 * such as WORKLOAD_KEY_COUNT is an ordinary setting.
 */
export function isSecretName(name: string): boolean {
  return /(^|_)KEYS?$|TOKEN|SECRET|PASSWORD/i.test(name);
}

/** The variables this tool sets itself; a setting may not override them. */
const RESERVED = new Set(['BASE_URL', 'IMAGE_BASE_URL', 'SCENARIO', 'RESULTS_DIR', 'FIXTURES_DIR', 'K6_NO_USAGE_REPORT']);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function scenarioKeys(scenario: Scenario): readonly KeyVar[] {
  return KEYS[scenario];
}

export function configMapName(name: string): string {
  return `${name}-script`;
}

export function archiveFile(scenario: Scenario): string {
  return `${scenario}.tar`;
}

/** Throws with every problem of the options at once. */
export function validate(o: RenderOptions): void {
  const problems: string[] = [];
  if (!SCENARIOS.includes(o.scenario)) problems.push(`unknown scenario "${o.scenario}" (one of ${SCENARIOS.join(', ')})`);
  // Jobs are <name>-<i>, Services <name>-service-<i>, the ConfigMap <name>-script: room under 63.
  if (!DNS_LABEL.test(o.name) || o.name.length > 48) problems.push(`--name "${o.name}" must be a DNS label of at most 48 characters`);
  if (!Number.isInteger(o.parallelism) || o.parallelism < 1) problems.push(`--parallelism must be a positive integer (got ${o.parallelism})`);
  else if (o.parallelism > 1 && SINGLE_RUNNER.has(o.scenario)) problems.push(`${o.scenario} is one iteration of one VU: it runs with --parallelism 1`);
  for (const [flag, url] of [['--base-url', o.baseUrl], ['--image-base-url', o.imageBaseUrl], ['--prometheus-url', o.prometheusUrl]] as const) {
    if (url === undefined) continue;
    if (!/^https?:\/\/[^\s]+$/.test(url)) problems.push(`${flag} must be an http(s) URL (got "${url}")`);
  }
  // spec.arguments is split on spaces by the operator.
  if (!/^[A-Za-z0-9._:-]+$/.test(o.testId)) problems.push(`--testid "${o.testId}" may hold only letters, digits and . _ : -`);
  for (const [k, v] of Object.entries(o.settings)) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(k)) problems.push(`setting "${k}" is not an environment variable name`);
    else if (isSecretName(k)) problems.push(`${k} looks like a credential: keys come from the Secret ${o.secretName}, never from a flag`);
    else if (RESERVED.has(k)) problems.push(`${k} is set by this tool (use its flag)`);
    if (/[\n\r]/.test(v)) problems.push(`setting ${k} has a line break`);
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
}

function labels(o: RenderOptions): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'recognition-load',
    'app.kubernetes.io/part-of': 'recognition-service',
    'app.kubernetes.io/component': o.scenario,
  };
}

/** The runner pods' environment: plain settings, then the keys by reference to the Secret. */
export function runnerEnv(o: RenderOptions): EnvVar[] {
  const plain: [string, string][] = [
    ['BASE_URL', o.baseUrl.replace(/\/+$/, '')],
    ...(o.imageBaseUrl !== undefined ? ([['IMAGE_BASE_URL', o.imageBaseUrl.replace(/\/+$/, '')]] as [string, string][]) : []),
    ['SCENARIO', o.scenario],
    // handleSummary writes its report files here; the root filesystem is read-only.
    ['RESULTS_DIR', '/tmp'],
    ['K6_NO_USAGE_REPORT', 'true'],
    ...Object.entries(o.settings).sort(([a], [b]) => a.localeCompare(b)),
  ];
  if (o.prometheusUrl !== undefined) {
    plain.push(['K6_PROMETHEUS_RW_SERVER_URL', o.prometheusUrl], ['K6_PROMETHEUS_RW_TREND_STATS', PROMETHEUS_TREND_STATS]);
  }
  const keys: EnvVar[] = KEYS[o.scenario].map((k) => ({
    name: k.name,
    valueFrom: { secretKeyRef: { name: o.secretName, key: k.name, ...(k.optional ? { optional: true } : {}) } },
  }));
  return [...plain.map(([name, value]) => ({ name, value })), ...keys];
}

/** spec.arguments: what every runner adds to `k6 run` (the operator splits it on spaces). */
export function k6Arguments(o: RenderOptions): string {
  const args = ['--tag', `testid=${o.testId}`];
  if (o.prometheusUrl !== undefined) args.push('-o', 'experimental-prometheus-rw');
  return args.join(' ');
}

export function renderTestRun(o: RenderOptions): TestRun {
  validate(o);
  const { cpu, memory } = o.resources;
  return {
    apiVersion: 'k6.io/v1alpha1',
    kind: 'TestRun',
    metadata: { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), labels: labels(o) },
    spec: {
      parallelism: o.parallelism,
      // One runner per node: a runner's CPU is the usual limit of a k6 test, not the API's.
      separate: true,
      // Jobs, pods and the TestRun go once the run ends: results live in Prometheus.
      cleanup: 'post',
      arguments: k6Arguments(o),
      script: { configMap: { name: configMapName(o.name), file: archiveFile(o.scenario) } },
      runner: {
        image: o.runnerImage,
        metadata: { labels: labels(o) },
        env: runnerEnv(o),
        // Requests equal to limits: a throttled runner under-reports the service's capacity.
        resources: { requests: { cpu, memory }, limits: { cpu, memory } },
        securityContext: { runAsNonRoot: true, runAsUser: K6_UID, runAsGroup: K6_UID },
        containerSecurityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        // The one writable place: the summary files and the initializer's re-archive.
        volumes: [{ name: 'tmp', emptyDir: {} }],
        volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      },
    },
  };
}

export function renderConfigMap(o: RenderOptions, archive: Buffer, k6Version: string): ConfigMap {
  validate(o);
  if (archive.length > CONFIGMAP_LIMIT_BYTES) {
    throw new Error(
      `the ${o.scenario} archive is ${archive.length} bytes, over a ConfigMap's ${CONFIGMAP_LIMIT_BYTES}: `
        + 'serve it from a volumeClaim (spec.script.volumeClaim) instead',
    );
  }
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: configMapName(o.name),
      ...(o.namespace ? { namespace: o.namespace } : {}),
      labels: labels(o),
      annotations: {
        // What the archive was made from: its options are fixed, so a rerun with other
        // settings needs a new archive.
        'recognition-service/k6-version': k6Version,
        'recognition-service/settings': Object.entries(o.settings).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(' '),
      },
    },
    binaryData: { [archiveFile(o.scenario)]: archive.toString('base64') },
  };
}

/** A multi-document YAML stream. */
export function toYaml(docs: readonly object[], header?: string): string {
  const body = docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
  return header ? `${header.split('\n').map((l) => (l ? `# ${l}` : '#')).join('\n')}\n${body}` : body;
}
