/**
 * Distributed load through Grafana's k6 operator, proven as far as it can be without the
 * operator (it cannot be obtained on this machine, so no TestRun is reconciled here):
 * - the manifests load-tests/tools/testrun.ts renders parse, carry what the operator needs,
 *   take keys only from a Secret, and the committed samples in deploy/k6-operator/ are
 *   exactly what the tool renders;
 * - the archive in the ConfigMap runs distributed the way the operator runs it: the
 *   initializer's archive + inspect, N real k6 runners on the operator's execution
 *   segments, started paused and un-paused over their REST API like the starter does,
 *   against the real service; together they do exactly the iterations one k6 does, with no
 *   failed check, and their results land in a real Prometheus under one testid.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { KEY_PLACEHOLDER, tarEntries } from '../../load-tests/tools/testrun/archive.js';
import { isSecretName, type ConfigMap, type TestRun } from '../../load-tests/tools/testrun/render.js';
import { renderFromCli } from '../../load-tests/tools/testrun.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { FIXTURE_IMAGES, REPO_ROOT } from '../helpers/fixtures.js';
import { initializerArchiveArgs, killRunner, resolveEnv, runnerArgs, segmentFlags, startAll, startRunner, type Runner } from '../helpers/k6-operator.js';
import { findBinary, freePort } from '../helpers/local-server.js';
import { prometheusTools, startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';

const run = promisify(execFile);
/** Each k6 step's own deadline, well inside the suite's: a hung k6 is killed, not left behind. */
const STEP_TIMEOUT_MS = 120_000;

/** `promise`, or after `ms` the rejection `what` once onTimeout (which kills) has run. */
async function withDeadline<T>(promise: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`${what}: no end after ${ms / 1000} s`));
    }, ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
const SAMPLES = path.join(REPO_ROOT, 'deploy', 'k6-operator');
const k6 = findBinary('k6', 'k6', 'K8S_TOOLS_BIN');

function docs(yaml: string): unknown[] {
  return parseAllDocuments(yaml).map((d) => {
    assert.equal(d.errors.length, 0, String(d.errors[0]));
    return d.toJS() as unknown;
  });
}

/** Every credential-like variable comes from a Secret; no plain value anywhere looks like one. */
function assertKeysOnlyFromSecret(testRun: TestRun, secretName: string): void {
  const keys = testRun.spec.runner.env.filter((e) => isSecretName(e.name));
  assert.ok(keys.length > 0, 'the scenario reads at least one key');
  for (const e of keys) {
    assert.equal(e.value, undefined, `${e.name} has a plain value`);
    assert.equal(e.valueFrom?.secretKeyRef.name, secretName, `${e.name} is not read from the Secret`);
    assert.equal(e.valueFrom?.secretKeyRef.key, e.name);
  }
  assert.ok(!/KEY|TOKEN|SECRET|PASSWORD/i.test(testRun.spec.arguments), 'no credential on the k6 command line');
}

describe('k6 operator manifests (load-tests/tools/testrun.ts)', () => {
  const samples = readdirSync(SAMPLES).filter((f) => f.endsWith('.testrun.yaml')).sort();

  it('has committed samples for the smoke and load scenarios', () => {
    assert.deepEqual(samples, ['recognition-load.testrun.yaml', 'recognition-smoke.testrun.yaml']);
  });

  for (const file of samples) {
    it(`${file} is what the tool renders from the command in its header`, async () => {
      const text = readFileSync(path.join(SAMPLES, file), 'utf8');
      const m = /^# Rendered by: npx tsx load-tests\/tools\/testrun\.ts (.*)$/m.exec(text);
      assert.ok(m, 'the sample names the command that made it');
      const { outputs } = await renderFromCli(m[1].split(' '));
      assert.equal(text, outputs.get(file), `re-render: npx tsx load-tests/tools/testrun.ts ${m[1]}`);
    });

    it(`${file} is a TestRun the operator accepts`, () => {
      const [testRun] = docs(readFileSync(path.join(SAMPLES, file), 'utf8')) as TestRun[];
      assert.equal(testRun.apiVersion, 'k6.io/v1alpha1');
      assert.equal(testRun.kind, 'TestRun');
      const { spec } = testRun;
      assert.ok(Number.isInteger(spec.parallelism) && spec.parallelism >= 1);
      assert.equal(spec.separate, true);
      assert.equal(spec.cleanup, 'post');
      assert.match(spec.script.configMap.name, /-script$/);
      assert.match(spec.script.configMap.file, /^[a-z]+\.tar$/);
      assert.match(spec.arguments, /(^| )--tag testid=[A-Za-z0-9._:-]+( |$)/);
      assert.match(spec.arguments, /(^| )-o experimental-prometheus-rw( |$)/);
      const env = new Map(spec.runner.env.map((e) => [e.name, e]));
      assert.match(env.get('K6_PROMETHEUS_RW_SERVER_URL')?.value ?? '', /^http:\/\/.+\/api\/v1\/write$/);
      assert.ok(env.get('BASE_URL')?.value, 'BASE_URL is set');
      assert.equal(env.has('FIXTURES_DIR'), false, 'the images are in the archive, found by their default path');
      assert.ok(spec.runner.resources.requests.cpu && spec.runner.resources.limits.memory);
      assert.match(spec.runner.image, /^grafana\/k6:\d+\.\d+\.\d+$/);
      assertKeysOnlyFromSecret(testRun, 'recognition-load-keys');
    });
  }

  it('points the smoke sample at the fixture server deploy/k6-operator/fixtures-server.yaml makes', () => {
    const [testRun] = docs(readFileSync(path.join(SAMPLES, 'recognition-smoke.testrun.yaml'), 'utf8')) as TestRun[];
    const imageBase = new URL(testRun.spec.runner.env.find((e) => e.name === 'IMAGE_BASE_URL')?.value ?? '');
    const [deployment, service] = docs(readFileSync(path.join(SAMPLES, 'fixtures-server.yaml'), 'utf8')) as any[];
    assert.equal(service.kind, 'Service');
    assert.equal(imageBase.hostname.split('.')[0], service.metadata.name);
    assert.equal(Number(imageBase.port), service.spec.ports[0].port);
    assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
    const container = deployment.spec.template.spec.containers[0];
    assert.ok(container.command.includes(String(container.ports[0].containerPort)), 'the server listens on the port it declares');
  });

  it('refuses a key as a setting, a split single-runner scenario and a name the operator cannot use', async () => {
    const base = ['--base-url', 'http://api:8080', '--testrun-only'];
    await assert.rejects(renderFromCli(['load', ...base, '-e', 'API_KEY=cvk_x']), /credential: keys come from the Secret/);
    await assert.rejects(renderFromCli(['smoke', ...base, '--parallelism', '2']), /runs with --parallelism 1/);
    await assert.rejects(renderFromCli(['load', ...base, '--name', 'Bad_Name']), /DNS label/);
    await assert.rejects(renderFromCli(['load', ...base, '--testid', 'a b']), /testid/);
  });

  it('tells keys from settings that only mention KEY: WORKLOAD_KEY_COUNT is an ordinary setting', async () => {
    for (const name of ['API_KEY', 'OTHER_KEY', 'WORKLOAD_KEYS', 'BALANCE_KEY', 'K6_CLOUD_TOKEN', 'CONSOLE_PASSWORD', 'S3_SECRET']) assert.equal(isSecretName(name), true, name);
    for (const name of ['WORKLOAD_KEY_COUNT', 'KEYSPACE', 'MONKEY_RATE', 'RATE', 'DURATION']) assert.equal(isSecretName(name), false, name);
    const { outputs } = await renderFromCli(['load', '--base-url', 'http://api:8080', '--testrun-only', '-e', 'WORKLOAD_KEY_COUNT=5']);
    const [testRun] = docs(outputs.get('recognition-load.testrun.yaml')!) as TestRun[];
    assert.equal(testRun.spec.runner.env.find((e) => e.name === 'WORKLOAD_KEY_COUNT')?.value, '5');
  });

  it('gives runner i of N the execution segment the operator does', () => {
    assert.deepEqual(segmentFlags(1, 3), ['--execution-segment=0:1/3', '--execution-segment-sequence=0,1/3,2/3,1']);
    assert.deepEqual(segmentFlags(3, 3), ['--execution-segment=2/3:1', '--execution-segment-sequence=0,1/3,2/3,1']);
  });
});

describe('a TestRun archive run distributed by real k6 runners', { skip: 'skip' in k6 ? k6.skip : false }, () => {
  const K6 = 'bin' in k6 ? k6.bin : '';
  const PARALLELISM = 3;
  // constant-arrival-rate, 1/s for 6.5 s: k6 starts one at 0 s and at every second up to
  // 6 s, 7 in all. The end falls half a second from any start: with 6 s, the start due at the
  // very end raced the end, and one k6 ran 7 where the runners ran 6. More VUs than
  // iterations, so none can be dropped however slow a call is: the counts depend on nothing
  // but k6's schedule. Latency limits far out of reach: no timing decides.
  const SETTINGS = ['RATE=1', 'DURATION=6500ms', 'PRE_VUS=8', 'MAX_VUS=8', 'P95_MS=600000', 'P99_MS=600000'];
  const ITERATIONS = 7;
  let testApp: TestApp;
  let prometheus: PrometheusServer | undefined;
  let dir: string;
  let baseUrl: string;
  let apiKey: string;
  const runners: Runner[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'recog-k6-distributed-'));
    testApp = await buildTestApp();
    await testApp.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
    apiKey = (await testApp.newKey({ rateLimit: 1_000_000, quota: 1_000_000 })).key;
    // Prometheus is the last part of the proof: without it (and outside CI) the runs still count.
    const tools = await prometheusTools().catch((err: Error) => {
      if (process.env.CI === 'true') throw err;
      console.log(`# without Prometheus: ${err.message.split('\n')[0]}`);
      return undefined;
    });
    if (tools) prometheus = await startPrometheus(tools.prometheus, { targets: [] });
  });

  after(async () => {
    for (const r of runners) killRunner(r);
    await prometheus?.stop();
    await testApp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The summary JSON handleSummary wrote into a runner's RESULTS_DIR (its pod's /tmp). */
  function summaryOf(resultsDir: string): { metrics: Record<string, { values: Record<string, number> }> } {
    const files = readdirSync(resultsDir).filter((f) => f.endsWith('.json'));
    assert.equal(files.length, 1, `one summary in ${resultsDir}: ${files.join(', ')}`);
    return JSON.parse(readFileSync(path.join(resultsDir, files[0]), 'utf8'));
  }
  const count = (s: ReturnType<typeof summaryOf>, metric: string, field = 'count') => s.metrics[metric]?.values[field] ?? 0;

  it('runs on N runners exactly the iterations one k6 runs, with no failed check', async (t) => {
    const testId = `k6-distributed-${process.pid}`;
    const argv = ['load', '--base-url', baseUrl, '--parallelism', String(PARALLELISM), '--testid', testId, '--fixtures', FIXTURE_IMAGES, '--k6', K6];
    if (prometheus) argv.push('--prometheus-url', `${prometheus.url}/api/v1/write`);
    for (const s of SETTINGS) argv.push('-e', s);
    const { outputs } = await renderFromCli(argv);
    const [configMap] = docs(outputs.get('recognition-load.configmap.yaml')!) as ConfigMap[];
    const [testRun] = docs(outputs.get('recognition-load.testrun.yaml')!) as TestRun[];
    assertKeysOnlyFromSecret(testRun, 'recognition-load-keys');
    for (const [file, yaml] of outputs) assert.equal(yaml.includes(apiKey), false, `the key is in ${file}`);

    // The ConfigMap mounted at /test: its one key is the archive.
    const file = testRun.spec.script.configMap.file;
    assert.deepEqual(Object.keys(configMap.binaryData), [file]);
    const tar = Buffer.from(configMap.binaryData[file], 'base64');
    const mount = path.join(dir, 'test');
    mkdirSync(mount);
    writeFileSync(path.join(mount, file), tar);
    const entries = tarEntries(tar);
    const metadata = JSON.parse(entries.get('metadata.json')!.toString('utf8'));
    assert.ok(metadata.env === null || Object.keys(metadata.env).length === 0, 'no environment in the archive');
    assert.equal(tar.includes(KEY_PLACEHOLDER) || tar.includes(apiKey), false, 'no key, not even the placeholder, in the archive');
    assert.ok([...entries.keys()].some((p) => p.endsWith('/load-tests/lib/workload.js')), 'the lib/ imports are in the archive');
    const image = [...entries.keys()].find((p) => p.endsWith('/shared/fixtures/images/basketball1.png'));
    assert.ok(image, 'the images are in the archive');
    // The staging directory is gone: whatever k6 opens below comes from the archive.
    assert.equal(existsSync(image.replace(/^file/, '')), false, `${image} is only in the archive`);

    // The pod's environment: runner.env with the Secret resolved. RESULTS_DIR is the pod's
    // own /tmp there; each runner gets its own directory here.
    const secrets = { 'recognition-load-keys': { API_KEY: apiKey } };
    const env = resolveEnv(testRun.spec.runner.env, secrets);
    assert.equal(env.RESULTS_DIR, '/tmp');

    // The initializer: archive the archive with the runner's env, then inspect it.
    const reArchived = path.join(dir, `${file}.archived.tar`);
    await run(K6, initializerArchiveArgs(testRun, mount, env, reArchived), { env: { PATH: process.env.PATH }, timeout: STEP_TIMEOUT_MS, killSignal: 'SIGKILL' });
    const inspect = JSON.parse(
      (await run(K6, ['inspect', '--execution-requirements', reArchived], { env: { PATH: process.env.PATH }, timeout: STEP_TIMEOUT_MS, killSignal: 'SIGKILL' })).stdout,
    );
    assert.equal(inspect.scenarios.load.executor, 'constant-arrival-rate');
    assert.equal(inspect.scenarios.load.rate, 60, 'RATE=1 was fixed into the archive (per minute)');

    // One k6, the whole test.
    const singleDir = path.join(dir, 'single');
    mkdirSync(singleDir);
    await run(K6, ['run', '--quiet', '--address', '', path.join(mount, file)], {
      env: { PATH: process.env.PATH, ...env, RESULTS_DIR: singleDir, K6_PROMETHEUS_RW_SERVER_URL: '' },
      maxBuffer: 16 * 1024 * 1024,
      // k6 starts no children: killing it on the deadline leaves nothing behind.
      timeout: STEP_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const single = summaryOf(singleDir);

    // N runners, as the operator starts them.
    for (let i = 1; i <= PARALLELISM; i++) {
      const resultsDir = path.join(dir, `runner-${i}`);
      mkdirSync(resultsDir);
      const address = `127.0.0.1:${await freePort()}`;
      runners.push(startRunner(K6, i, runnerArgs(testRun, i, mount, address), { ...env, RESULTS_DIR: resultsDir }, address));
    }
    // A runner that never ends (a lost un-pause, a hung request) is killed with its group.
    const killAll = () => runners.forEach(killRunner);
    await withDeadline(startAll(runners), STEP_TIMEOUT_MS, 'starting the runners', killAll);
    const codes = await withDeadline(Promise.all(runners.map((r) => r.exit)), STEP_TIMEOUT_MS, 'the runners', killAll);
    codes.forEach((code, i) => assert.equal(code, 0, `runner ${i + 1} exited ${code}: ${runners[i].output()}`));
    const parts = runners.map((_, i) => summaryOf(path.join(dir, `runner-${i + 1}`)));

    const iterations = count(single, 'iterations');
    assert.equal(iterations, ITERATIONS, `one k6 ran ${iterations} iterations`);
    const perRunner = parts.map((p) => count(p, 'iterations'));
    assert.ok(perRunner.every((n) => n > 0), `every runner did its share: ${perRunner.join(', ')}`);
    assert.equal(perRunner.reduce((a, b) => a + b, 0), count(single, 'iterations'), `runners ${perRunner.join(' + ')} vs one k6`);
    t.diagnostic(`iterations: runners ${perRunner.join(' + ')}, one k6 ${iterations}`);
    const reqs = parts.map((p) => count(p, 'http_reqs'));
    assert.equal(reqs.reduce((a, b) => a + b, 0), count(single, 'http_reqs'), `requests ${reqs.join(' + ')} vs one k6`);
    for (const [label, s] of [['one k6', single], ...parts.map((p, i) => [`runner ${i + 1}`, p] as const)] as const) {
      assert.equal(count(s, 'checks', 'fails'), 0, `${label}: failed checks`);
      assert.ok(count(s, 'checks', 'passes') > 0, `${label}: checks ran`);
      assert.equal(count(s, 'http_req_failed', 'passes'), 0, `${label}: failed requests`);
      assert.equal(count(s, 'dropped_iterations'), 0, `${label}: dropped iterations`);
    }

    if (prometheus) {
      // Every runner's series under the one testid, told apart by instance_id.
      const sel = `k6_iterations_total{testid="${testId}"}`;
      const instances = await eventually(
        async () => {
          const r = await prometheus!.query(`count by (instance_id) (${sel})`);
          return r.length === PARALLELISM ? r.map((x) => x.metric.instance_id).sort() : false;
        },
        { what: `${PARALLELISM} runners' series in Prometheus`, timeoutMs: 30_000, intervalMs: 250 },
      );
      assert.deepEqual(instances, Array.from({ length: PARALLELISM }, (_, i) => String(i + 1)));
      t.diagnostic(`Prometheus: k6_iterations_total{testid="${testId}"} from instance_id ${instances.join(', ')}`);
      // The last push of each runner carries its final count.
      await eventually(
        async () => {
          const [r] = await prometheus!.query(`sum(last_over_time(${sel}[10m]))`);
          return r !== undefined && Number(r.value[1]) === iterations;
        },
        { what: `${iterations} iterations summed over the runners in Prometheus`, timeoutMs: 30_000, intervalMs: 250 },
      );
    }
  });
});
