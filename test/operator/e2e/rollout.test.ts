/**
 * A canary's automatic rollout end to end: the operator on a real kube-apiserver, reading the
 * API's metrics from a real Prometheus; the API as real processes of this service (in-process
 * apps on their own ports, one shared PostgreSQL database) in front of our KServe v2 gRPC
 * server, which serves the stable model and three canaries (the same ONNX file under other
 * names): one whose inferences fail, one that answers slowly, one as good as stable.
 *
 * The test plays the kubelet for the API Deployment: whenever the operator changes the pod
 * template's rollout settings (the canary, its weight), it starts an API "pod" with them,
 * has Prometheus discover it, sends new requests there, and stops the old one once its
 * requests are answered (what a rolling update with readiness and endpoint removal gives).
 * Clients send requests all along and none may fail: a failing or slow canary is answered
 * for by the stable model, then rolled back; the good one is promoted, and a replay answers
 * with the model that first processed the request, across the promotion.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { InferenceBackend } from '../../../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../../../src/inference/onnxruntime-backend.js';
import { startV2Server } from '../../../src/inference/v2-server/server.js';
import type { RecognitionOperator } from '../../../src/operator/operator.js';
import type { RecognitionService, RolloutStatus } from '../../../src/operator/api/types.js';
import { buildTestApp, type TestApp, type TestKey } from '../../helpers/app.js';
import { REPO_ROOT, readFixture } from '../../helpers/fixtures.js';
import { prometheusTools, startPrometheus, type PrometheusServer } from '../../helpers/prometheus.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.js';
import { eventually, findTools, installCrds, startCluster, testOperator, type TestCluster } from '../helpers/cluster.js';

type Any = any;
const NS = 'rollout';
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const STABLE = 'centernet';
const CANARIES = { failing: 'canary-failing', slow: 'canary-slow', good: 'canary-good' } as const;
/** The API pod settings the operator's rollout decides; the rest is the test's (loopback servers, local catalogs). */
const ROLLOUT_ENV = ['MODEL_NAME', 'TRITON_MODEL_NAME', 'TRITON_MODEL_VERSION', 'CANARY_WEIGHT', 'CANARY_MODEL_NAME', 'CANARY_MODEL_VERSION'];
const IMAGE = readFixture('camera.png').toString('base64');
/** Short turns for a test; the thresholds leave room for a busy machine's noise on a good canary. */
const ANALYSIS = { intervalSeconds: 5, windowSeconds: 30, stepWeight: 40, maxWeight: 60, failureLimit: 2, minRequests: 5, maxErrorRateIncrease: 5, maxLatencyIncrease: 300 };
/** How long the slow canary takes per inference: far past 4x the stable model's (about 0.1 s here), well within a request's 29 s. */
const SLOW_MS = 1_500;

const { tools, missing } = findTools();
if (!tools) console.log(`# rollout e2e skipped: ${missing}`);

interface Answer {
  status: string;
  model: { name: string; version: string } | null;
  error?: string;
}

/** One API pod: a real app of this service on its own loopback port. */
interface Pod {
  name: string;
  app: TestApp;
  url: string;
  /** Its rollout settings, as the Deployment's template gave them. */
  env: Record<string, string>;
  inFlight: number;
}

/** A POST with a connection of its own (no keep-alive: a stopped pod cannot reset a reused socket). */
function post(url: string, apiKey: string, body: object): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'x-api-key': apiKey } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('a canary rolled out by the operator on the API metrics in Prometheus', { skip: tools ? false : missing, timeout: 15 * 60_000 }, () => {
  let dir: string;
  let database: TestDatabase;
  let server: Awaited<ReturnType<typeof startV2Server>>;
  let prometheus: PrometheusServer;
  let cluster: TestCluster;
  let operator: RecognitionOperator;
  let custom: CustomObjectsApi;
  let apps: AppsV1Api;
  let key: TestKey;
  let pod: Pod | undefined;
  let podCount = 0;
  let kubelet: Promise<void> | undefined;
  let stopping = false;
  let kubeletError: Error | undefined;
  /** What clients were answered, by external_id, and every failed request. */
  const answers = new Map<string, Answer>();
  const failures: string[] = [];
  let load: Promise<void> | undefined;
  let requestCount = 0;

  const getRs = async () => (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' })) as RecognitionService;
  const patchRs = (body: Any) => custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision', body }, merge);
  const rollout = (what: string, ok: (r: RolloutStatus) => boolean, timeoutMs = 180_000) =>
    eventually(async () => {
      if (kubeletError) throw kubeletError; // the pods stopped following the template: the wait fails naming why
      const r = (await getRs()).status?.rollout;
      return r && ok(r) ? r : undefined;
    }, what, timeoutMs);

  /** The rollout settings of the API Deployment's pod template. */
  async function templateEnv(): Promise<Record<string, string> | undefined> {
    const d = await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS }).catch(() => undefined);
    const env = d?.spec?.template.spec?.containers[0].env;
    if (!env) return undefined;
    return Object.fromEntries(env.filter((e) => ROLLOUT_ENV.includes(e.name) && e.value !== undefined).map((e) => [e.name, e.value!]));
  }

  async function startPod(env: Record<string, string>): Promise<Pod> {
    const canary = env.CANARY_MODEL_NAME;
    const app = await buildTestApp(
      {
        ...env,
        TRITON_URL: server.grpcAddress,
        MODEL_REPOSITORY: path.join(dir, 'repo'),
        ...(canary ? { CANARY_MODEL_CATALOG: path.join(dir, 'repo', canary, 'catalog.json') } : {}),
      },
      { shareDatabase: database },
    );
    try {
      await eventually(async () => {
        const res = await app.app.inject({ method: 'GET', url: '/readyz' });
        const checks = (JSON.parse(res.body) as { checks: Record<string, string> }).checks;
        return res.statusCode === 200 && (checks.canary === undefined || checks.canary === 'ok') ? true : undefined;
      }, 'an API pod ready, its canary too');
      await app.app.listen({ host: '127.0.0.1', port: 0 });
    } catch (err) {
      await app.close();
      throw err;
    }
    const { port } = app.app.server.address() as AddressInfo;
    return { name: `vision-api-${++podCount}`, app, url: `http://127.0.0.1:${port}`, env, inFlight: 0 };
  }

  /** The pods Prometheus scrapes, as the ServiceMonitor would have it: the API Service's labels. */
  const scrape = (pods: Pod[]) =>
    prometheus.setTargets(pods.map((p) => ({ service: 'vision-api', namespace: NS, pod: p.name, container: 'api', address: p.url.slice('http://'.length) })));

  /** Follows the Deployment's template: a new pod for new settings, the old one stopped once drained. */
  async function followTemplate(): Promise<void> {
    while (!stopping) {
      const env = await templateEnv();
      if (env && JSON.stringify(env) !== JSON.stringify(pod?.env)) {
        const next = await startPod(env);
        const old = pod;
        try {
          await scrape(old ? [old, next] : [next]);
        } catch (err) {
          await next.app.close();
          throw err;
        }
        pod = next;
        if (old) {
          await eventually(async () => (old.inFlight === 0 ? true : undefined), `${old.name} drained`);
          await old.app.close();
          await scrape([next]);
        }
      }
      await sleep(200);
    }
  }

  /** Clients: `width` callers, each sending sync requests with new external_ids to the current pod. */
  function startLoad(width: number): Promise<void> {
    return Promise.all(
      Array.from({ length: width }, async () => {
        while (!stopping) {
          const target = pod;
          if (!target) {
            await sleep(50);
            continue;
          }
          const id = `load-${++requestCount}`;
          target.inFlight++;
          try {
            const res = await post(`${target.url}/v1/cv/requests/sync`, key.key, { external_id: id, image_base64: IMAGE });
            const body = JSON.parse(res.body) as Answer;
            if (res.status !== 200 || body.status !== 'DONE') failures.push(`${id} on ${target.name}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
            else answers.set(id, body);
          } catch (err) {
            failures.push(`${id} on ${target.name}: ${(err as Error).message}`);
          } finally {
            target.inFlight--;
          }
        }
      }),
    ).then(() => undefined);
  }

  const answered = (model: string) => [...answers.entries()].filter(([, a]) => a.model?.name === model);

  before(async () => {
    const { prometheus: prometheusBin } = await prometheusTools();
    dir = await mkdtemp(path.join(os.tmpdir(), 'recog-rollout-'));
    const real = path.join(REPO_ROOT, 'model-repository', STABLE);
    const repo = path.join(dir, 'repo');
    await mkdir(repo);
    await symlink(real, path.join(repo, STABLE));
    const config = await readFile(path.join(real, 'config.pbtxt'), 'utf8');
    const catalog = JSON.parse(await readFile(path.join(real, 'catalog.json'), 'utf8'));
    for (const name of Object.values(CANARIES)) {
      await mkdir(path.join(repo, name, '1'), { recursive: true });
      await symlink(path.join(real, '1', 'model.onnx'), path.join(repo, name, '1', 'model.onnx'));
      await writeFile(path.join(repo, name, 'config.pbtxt'), config.replace(`name: "${STABLE}"`, `name: "${name}"`));
      await writeFile(path.join(repo, name, 'catalog.json'), JSON.stringify({ ...catalog, model: { name, version: '1' } }));
    }
    server = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      models: [STABLE, ...Object.values(CANARIES)],
      createBackend: (m) => {
        const real = new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 });
        const name = m.config.name;
        if (name !== CANARIES.failing && name !== CANARIES.slow) return real;
        const bad: InferenceBackend = {
          kind: real.kind,
          start: () => real.start(),
          metadata: () => real.metadata(),
          ready: () => real.ready(),
          infer: async (inputs, options) => {
            if (name === CANARIES.failing) throw new Error('this canary cannot infer');
            await sleep(SLOW_MS);
            return real.infer(inputs, options);
          },
          close: () => real.close(),
        };
        return bad;
      },
    });
    database = await createTestDatabase();
    prometheus = await startPrometheus(prometheusBin, { targets: [] });

    cluster = await startCluster(tools!);
    const kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    apps = kc.makeApiClient(AppsV1Api);
    await installCrds(kc);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of [NS, 'recognition-system']) await core.createNamespace({ body: { metadata: { name } } });
    operator = testOperator(kc, { leaseNamespace: 'recognition-system', identity: 'rollout-operator', prometheusUrl: prometheus.url });
    await operator.start();
    await eventually(async () => (operator.isLeader ? true : undefined), 'operator leads');

    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      body: {
        apiVersion: 'cv.recognition.io/v1alpha1',
        kind: 'RecognitionService',
        metadata: { name: 'vision' },
        spec: {
          api: {
            image: 'recognition-service:0.1.0',
            databaseUrlSecretRef: { name: 'vision-secrets' },
            redisUrlSecretRef: { name: 'vision-secrets' },
            replicas: { min: 1, max: 1 },
          },
          // Every canary listed: starting, promoting or aborting one never restarts Triton.
          triton: { storageUri: 'pvc://models', modelName: STABLE, modelVersion: '1', models: [STABLE, ...Object.values(CANARIES)] },
        },
      },
    });
    // The first API pod, a client key in the shared database, then clients all along.
    kubelet = followTemplate().catch((err: unknown) => {
      kubeletError = err instanceof Error ? err : new Error(String(err));
    });
    await eventually(async () => pod ?? (kubeletError ? Promise.reject(kubeletError) : undefined), 'the first API pod', 120_000);
    key = await pod!.app.newKey();
    load = startLoad(4);
    await eventually(async () => (answered(STABLE).length >= 10 ? true : undefined), 'clients answered by the stable model');
  });

  after(async () => {
    stopping = true;
    await load;
    await kubelet;
    await pod?.app.close();
    await operator?.stop();
    await cluster?.stop();
    await prometheus?.stop();
    await server?.close({ graceMs: 0 });
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const events = async (reason: string) =>
    (await cluster.kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: 'regarding.name=vision' })).items.filter((e) => e.reason === reason);

  /** Starts a canary under analysis and waits for the operator's verdict. */
  async function tryCanary(name: string, end: 'RolledBack' | 'Promoted'): Promise<RolloutStatus> {
    await patchRs({ spec: { canary: { modelName: name, modelVersion: null, weight: 20, analysis: ANALYSIS } } });
    const r = await rollout(`the ${name} canary ${end}`, (s) => s.canary?.name === name && (s.phase === 'RolledBack' || s.phase === 'Promoted'));
    assert.equal(r.phase, end, r.analysis?.message);
    if (kubeletError) throw kubeletError;
    return r;
  }

  test('a canary whose inferences fail is rolled back to weight 0; clients are answered by the stable model meanwhile', async () => {
    const r = await tryCanary(CANARIES.failing, 'RolledBack');
    assert.equal(r.canaryWeight, 0);
    assert.equal(r.analysis?.failedChecks, ANALYSIS.failureLimit);
    // Both counts read over the same window: every canary request failed, exactly.
    assert.equal(r.analysis?.canary?.errorRatePercent, 100, JSON.stringify(r.analysis));
    assert.match(r.analysis?.message ?? '', /^rolled back \(weight 0\) after 2 failed checks: canary worse than stable: error rate 100% vs 0%/);
    await eventually(async () => ((await templateEnv())?.CANARY_WEIGHT === '0' ? true : undefined), 'the API pods given weight 0');
    await eventually(async () => ((await events('RolloutRolledBack')).length > 0 ? true : undefined), 'a RolloutRolledBack event');
    assert.ok((await events('RolloutStarted')).length > 0);
    assert.ok((await events('RolloutCheckFailed')).length > 0);
    assert.equal(answered(CANARIES.failing).length, 0, 'no client saw the failing canary');
    assert.deepEqual(failures, []);
  });

  test('a canary that answers slowly is rolled back on latency', async () => {
    const r = await tryCanary(CANARIES.slow, 'RolledBack');
    assert.match(r.analysis!.message, /mean latency \d+(\.\d)? ms vs \d+(\.\d)? ms \(at most \+300%\)/);
    assert.ok(r.analysis!.canary!.meanLatencyMs! >= SLOW_MS, JSON.stringify(r.analysis));
    assert.deepEqual(failures, []);
  });

  test('a good canary is raised to maxWeight and promoted; replays answer with the model that processed them; promoting it for good changes nothing clients see', async () => {
    const before = answered(STABLE).slice(0, 5);
    const r = await tryCanary(CANARIES.good, 'Promoted');
    assert.equal(r.canaryWeight, 100);
    // A check may fail on a busy machine's noise (one slow inference in a small sample); one
    // failure is within failureLimit, so the promotion is what is asserted.
    assert.ok((r.analysis?.passedChecks ?? 0) >= 2, 'checks at 20 and at 60');
    await eventually(async () => ((await events('RolloutWeightRaised')).some((e) => /weight 20 -> 60/.test(e.note ?? '')) ? true : undefined), 'the raise to 60 recorded');
    await eventually(async () => ((await events('RolloutPromoted')).length > 0 ? true : undefined), 'a RolloutPromoted event');
    assert.equal((await events('RolloutPromoted')).length, 1, 'one promotion, however many reconciles saw it due');
    await eventually(async () => (pod?.env.CANARY_WEIGHT === '100' ? true : undefined), 'an API pod at weight 100');
    const id = `after-promotion-${Date.now()}`;
    const fresh = JSON.parse((await post(`${pod!.url}/v1/cv/requests/sync`, key.key, { external_id: id, image_base64: IMAGE })).body) as Answer;
    assert.equal(fresh.model?.name, CANARIES.good, 'every new request goes to the promoted canary');

    // A replay (same external_id and image) answers with the stored result: the model that processed it.
    const byCanary = answered(CANARIES.good).slice(0, 5);
    assert.ok(byCanary.length > 0);
    const replayAll = async (list: Array<[string, Answer]>) => {
      for (const [externalId, first] of list) {
        const res = await post(`${pod!.url}/v1/cv/requests/sync`, key.key, { external_id: externalId, image_base64: IMAGE });
        assert.equal(res.status, 200, res.body);
        assert.deepEqual((JSON.parse(res.body) as Answer).model, first.model, `replay of ${externalId}`);
      }
    };
    await replayAll([...before, ...byCanary]);

    // For good: the canary becomes the stable model (the documented patch); the service answers as before.
    await patchRs({ spec: { triton: { modelName: CANARIES.good, modelVersion: '' }, canary: null } });
    await rollout('the rollout Stable on the promoted model', (s) => s.phase === 'Stable' && s.stable.name === CANARIES.good && s.canary === undefined);
    await eventually(async () => (pod?.env.TRITON_MODEL_NAME === CANARIES.good && pod.env.CANARY_WEIGHT === undefined ? true : undefined), 'an API pod on the promoted model alone');
    await eventually(async () => ([...answers.values()].slice(-5).every((a) => a.model?.name === CANARIES.good) ? true : undefined), 'clients answered by the promoted model');
    await replayAll([...before, ...byCanary]);
    assert.deepEqual(failures, [], 'no client request failed through three rollouts');
  });
});
