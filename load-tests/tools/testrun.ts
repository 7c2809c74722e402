/**
 * Renders what Grafana's k6 operator needs to run one scenario of load-tests/ distributed:
 * a ConfigMap with the scenario as a `k6 archive` and a k6.io/v1alpha1 TestRun.
 *
 *   npx tsx load-tests/tools/testrun.ts <scenario> --base-url URL [options] | kubectl apply --server-side -f -
 *
 * Keys never pass through here: the TestRun reads them from a Secret (--secret).
 * docs/performance.md ("Distributed load with the k6 operator") walks through a run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { makeArchive } from './testrun/archive.js';
import {
  renderConfigMap,
  renderTestRun,
  scenarioKeys,
  SCENARIOS,
  toYaml,
  validate,
  type RenderOptions,
  type Scenario,
} from './testrun/render.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const USAGE = `usage: npx tsx load-tests/tools/testrun.ts <scenario> --base-url URL [options]
  scenarios: ${SCENARIOS.join(' ')}
    (not grpc: it needs a prepared tensor and a gRPC target; not workload: its generated images
    are tens of MB, over a ConfigMap's 1 MiB)
  --base-url URL         the API as the runner pods reach it (http://<name>-api.<namespace>.svc:8080)
  --parallelism N        runner pods (default 4; smoke and limits: 1)
  --name NAME            TestRun name (default recognition-<scenario>); ConfigMap <name>-script
  --namespace NS         metadata.namespace of both
  --image-base-url URL   where the API fetches URL-mode images (smoke, mix, OP=sync_url|batch)
  --secret NAME          Secret with the keys, one entry per variable (default recognition-load-keys)
  --testid ID            value of the testid tag on every sample (default: the name)
  --prometheus-url URL   Prometheus remote-write URL (…/api/v1/write): k6 results into Prometheus
  --runner-image IMAGE   default grafana/k6:<version of the k6 that made the archive>
  --cpu CPU --memory MEM runner requests = limits (default 1, 512Mi)
  -e, --env K=V          scenario setting (RATE, DURATION, OP, …), repeatable; no keys
  --out DIR              write <name>.configmap.yaml and <name>.testrun.yaml (default: stdout)
  --testrun-only         only the TestRun, no archive and no k6 (the committed samples)
  --fixtures DIR         fixture images (default FIXTURES_DIR, FIXTURE_IMAGES or ../shared/fixtures/images)
  --k6 PATH              k6 binary (default $K6, else scripts/k6.sh)`;

export interface CliResult {
  /** File name → YAML (stdout: one key, "-"). */
  outputs: Map<string, string>;
}

/** The pinned k6 version (scripts/k6.sh), for the runner image when no archive is made. */
export function pinnedK6Version(repoRoot = REPO_ROOT): string {
  const m = /K6_VERSION=\$\{K6_VERSION:-v?([0-9][^}]*)\}/.exec(readFileSync(path.join(repoRoot, 'scripts', 'k6.sh'), 'utf8'));
  if (!m?.[1]) throw new Error('scripts/k6.sh: no pinned K6_VERSION');
  return m[1];
}

function defaultFixtures(repoRoot: string): string {
  return process.env.FIXTURES_DIR || process.env.FIXTURE_IMAGES || path.resolve(repoRoot, '..', 'shared', 'fixtures', 'images');
}

function k6Binary(repoRoot: string): string {
  if (process.env.K6) return process.env.K6;
  return execFileSync(path.join(repoRoot, 'scripts', 'k6.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** Parses argv into render options plus what to do; throws with the usage on a mistake. */
export function parseCli(argv: string[]): { options: Omit<RenderOptions, 'runnerImage'> & { runnerImage?: string }; testrunOnly: boolean; out?: string; fixtures?: string; k6?: string } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      parallelism: { type: 'string' },
      name: { type: 'string' },
      namespace: { type: 'string' },
      'image-base-url': { type: 'string' },
      secret: { type: 'string', default: 'recognition-load-keys' },
      testid: { type: 'string' },
      'prometheus-url': { type: 'string' },
      'runner-image': { type: 'string' },
      cpu: { type: 'string', default: '1' },
      memory: { type: 'string', default: '512Mi' },
      env: { type: 'string', short: 'e', multiple: true, default: [] },
      out: { type: 'string' },
      'testrun-only': { type: 'boolean', default: false },
      fixtures: { type: 'string' },
      k6: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new Error(USAGE);
  const [scenario, ...extra] = positionals;
  if (!scenario || extra.length > 0) throw new Error(USAGE);
  if (!SCENARIOS.includes(scenario as Scenario)) throw new Error(`unknown scenario "${scenario}"\n${USAGE}`);
  if (!values['base-url']) throw new Error(`--base-url is required\n${USAGE}`);
  const settings: Record<string, string> = {};
  for (const kv of values.env) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new Error(`-e ${kv}: expected NAME=VALUE`);
    settings[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const single = scenario === 'smoke' || scenario === 'limits';
  const name = values.name ?? `recognition-${scenario}`;
  return {
    options: {
      scenario: scenario as Scenario,
      name,
      namespace: values.namespace,
      parallelism: values.parallelism !== undefined ? Number(values.parallelism) : single ? 1 : 4,
      baseUrl: values['base-url'],
      imageBaseUrl: values['image-base-url'],
      secretName: values.secret,
      testId: values.testid ?? name,
      prometheusUrl: values['prometheus-url'],
      runnerImage: values['runner-image'],
      resources: { cpu: values.cpu, memory: values.memory },
      settings,
    },
    testrunOnly: values['testrun-only'],
    out: values.out,
    fixtures: values.fixtures,
    k6: values.k6,
  };
}

/** What a run of the tool prints or writes; exported so a test renders exactly the same. */
export async function renderFromCli(argv: string[], repoRoot = REPO_ROOT): Promise<CliResult> {
  const cli = parseCli(argv);
  const header = `Rendered by: npx tsx load-tests/tools/testrun.ts ${argv.join(' ')}`;
  const outputs = new Map<string, string>();
  const name = cli.options.name;
  if (cli.testrunOnly) {
    const o: RenderOptions = { ...cli.options, runnerImage: cli.options.runnerImage ?? `grafana/k6:${pinnedK6Version(repoRoot)}` };
    outputs.set(`${name}.testrun.yaml`, toYaml([renderTestRun(o)], header));
    return { outputs };
  }
  // Refuse bad options before spending seconds on the archive.
  validate({ ...cli.options, runnerImage: cli.options.runnerImage ?? 'grafana/k6' });
  const fixtures = cli.fixtures ?? defaultFixtures(repoRoot);
  if (!existsSync(fixtures)) throw new Error(`fixture images not found in ${fixtures}: pass --fixtures DIR`);
  const archive = await makeArchive({
    k6: cli.k6 ?? k6Binary(repoRoot),
    repoRoot,
    fixturesDir: fixtures,
    scenario: cli.options.scenario,
    settings: cli.options.settings,
    keyNames: scenarioKeys(cli.options.scenario).map((k) => k.name),
  });
  const o: RenderOptions = { ...cli.options, runnerImage: cli.options.runnerImage ?? `grafana/k6:${archive.k6Version}` };
  outputs.set(`${name}.configmap.yaml`, toYaml([renderConfigMap(o, archive.tar, archive.k6Version)], header));
  outputs.set(`${name}.testrun.yaml`, toYaml([renderTestRun(o)], header));
  return { outputs };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { outputs } = await renderFromCli(argv);
  const out = parseCli(argv).out;
  if (out === undefined) {
    process.stdout.write([...outputs.values()].join('---\n'));
    return;
  }
  mkdirSync(out, { recursive: true });
  for (const [file, yaml] of outputs) {
    writeFileSync(path.join(out, file), yaml);
    process.stderr.write(`testrun: wrote ${path.join(out, file)}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`testrun: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  });
}
