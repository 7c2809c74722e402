/**
 * The operator keeps the spec's model versions loaded on a real Triton: tritonserver (the
 * binary of nvidia-pytriton, run on its own, explicit model control) serving a python-backend
 * model with versions 1, 2 and 3 that answers with its version, and the operator on a real
 * kube-apiserver with exactly the chart's RBAC. The test plays the kubelet and the Deployment
 * controller: one Triton pod whose address is that Triton, and the API Deployment's status.
 * The operator reaches a pod at its IP on Triton's port 8000, whatever the pod declares: this
 * Triton listens on 8000 of a loopback address of its own (127.0.0.N), the pod's IP.
 *
 * A client stands for the API pods all along: it asks Triton for the versions the API pods
 * were last given (TRITON_MODEL_VERSION, CANARY_MODEL_VERSION of the Deployment the operator
 * applies), from the moment they were given, and keeps asking for the old ones until the test
 * has settled the Deployment. Not one of its requests may fail: a version is loaded before the
 * API pods are told of it, and unloaded only once none of them can still ask for it.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, EventsV1Api, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import { REPO_ROOT } from '../../helpers/fixtures.js';
import { pythonEnv, startTritonServer, type RealTriton } from '../../helpers/python-env.js';
import { applyChartRbac, eventually, findTools, installCrds, startCluster, testOperator, type TestCluster } from '../helpers/cluster.js';
import type { RecognitionOperator } from '../../../src/operator/operator.js';

type Any = any;
const NS = 'versions';
const OP_NS = 'recognition-system';
const MODEL = 'versioned';
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const GATE = 'cv.recognition.io/versions-loaded';

const { tools, missing } = findTools();
const env = pythonEnv();
const skip = !tools ? `the simulated cluster's tools are missing: ${missing}` : 'skip' in env ? env.skip : false;

describe('the operator loads the spec\'s versions on a real Triton, and unloads the old one after a promotion', { skip }, () => {
  let dir: string;
  let triton: RealTriton & { httpUrl: string };
  let podIP: string;
  let cluster: TestCluster;
  let operator: RecognitionOperator;
  let custom: CustomObjectsApi;
  let apps: AppsV1Api;
  let core: CoreV1Api;

  // The client standing for the API pods.
  let asked: string[] = [];
  let stopping = false;
  let client: Promise<void> | undefined;
  const answers = new Map<string, number>();
  const failures: string[] = [];

  async function infer(version: string): Promise<void> {
    try {
      const res = await fetch(`${triton.httpUrl}/v2/models/${MODEL}/versions/${version}/infer`, {
        method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'x', shape: [1, 1], datatype: 'FP32', data: [0] }] }),
        signal: AbortSignal.timeout(30_000),
      });
      const body = (await res.json()) as { outputs?: Array<{ data: number[] }>; error?: string };
      if (res.status !== 200 || String(body.outputs?.[0]?.data[0]) !== version) failures.push(`version ${version}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      else answers.set(version, (answers.get(version) ?? 0) + 1);
    } catch (err) {
      failures.push(`version ${version}: ${(err as Error).message}`);
    }
  }

  /** A loopback address of this machine (127.0.0.N) where Triton's port 8000 is free. */
  async function loopbackWithPort8000(): Promise<string> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const address = `127.0.0.${2 + Math.floor(Math.random() * 250)}`;
      const free = await new Promise<boolean>((resolve) => {
        const server = net.createServer().once('error', () => resolve(false));
        server.listen(8000, address, () => server.close(() => resolve(true)));
      });
      if (free) return address;
    }
    throw new Error('no loopback address with port 8000 free');
  }

  const index = async () =>
    ((await (await fetch(`${triton.httpUrl}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as Array<{ name: string; version: string; state: string }>)
      .filter((e) => e.name === MODEL && e.state === 'READY')
      .map((e) => e.version)
      .sort();
  const patchRs = (body: Any) => custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision', body }, merge);
  const apiDeployment = () => apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS });
  const envOf = (d: V1Deployment) => Object.fromEntries((d.spec!.template.spec!.containers[0].env ?? []).map((e) => [e.name, e.value ?? '']));
  /** The versions the API pods of this Deployment ask for. */
  const versionsOf = (d: V1Deployment) => [envOf(d).TRITON_MODEL_VERSION, envOf(d).CANARY_MODEL_VERSION].filter(Boolean);
  const gate = async () => (await core.readNamespacedPodStatus({ name: 'vision-triton-0', namespace: NS })).status?.conditions?.find((c) => c.type === GATE);
  /** The resource's Degraded condition once it is TritonLoadFailed with a message matching `re` (status, unlike Events, is never rate-limited). */
  const degradedWith = (re: RegExp) =>
    eventually(async () => {
      const rs = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' }));
      return rs.status?.conditions?.find((c: Any) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'TritonLoadFailed' && re.test(c.message)) as { message: string } | undefined;
    }, `Degraded TritonLoadFailed: ${re}`);
  const events = async (reason: string) =>
    (await cluster.kubeConfig().makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: 'regarding.name=vision' })).items.filter((e) => e.reason === reason);

  /**
   * Waits for the operator to give the API pods `versions`, checks that Triton serves them at
   * that moment, and has the client ask for them too (the old ones still, until settled).
   */
  async function apiPodsGiven(versions: string[]): Promise<V1Deployment> {
    const d = await eventually(async () => {
      const dep = await apiDeployment();
      return JSON.stringify(versionsOf(dep)) === JSON.stringify(versions) ? dep : undefined;
    }, `the API pods given versions ${versions.join(', ')}`);
    const ready = await index();
    for (const v of versions) assert.ok(ready.includes(v), `version ${v} loaded before the API pods are told of it (ready: ${ready.join(', ')})`);
    asked = [...new Set([...asked, ...versions])];
    return d;
  }

  /** Plays the Deployment controller: every API pod runs the current template, none drains; the client asks for its versions only. */
  async function settle(d: V1Deployment): Promise<void> {
    await apps.patchNamespacedDeploymentStatus(
      {
        name: 'vision-api',
        namespace: NS,
        body: { status: { observedGeneration: d.metadata!.generation, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 } },
      },
      merge,
    );
    asked = versionsOf(d);
  }

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recog-versions-'));
    const repo = path.join(dir, 'repo', MODEL);
    const source = path.join(REPO_ROOT, 'test', 'triton', 'versioned-model');
    await mkdir(repo, { recursive: true });
    await copyFile(path.join(source, 'config.pbtxt'), path.join(repo, 'config.pbtxt'));
    for (const v of ['1', '2', '3']) {
      await mkdir(path.join(repo, v));
      await copyFile(path.join(source, 'model.py'), path.join(repo, v, 'model.py'));
    }
    // The arguments the operator gives Triton in explicit mode (desired/triton.ts).
    podIP = await loopbackWithPort8000();
    triton = await startTritonServer(
      (env as { python: string }).python,
      path.dirname(repo),
      dir,
      ['--model-control-mode=explicit', `--load-model=${MODEL}`, '--exit-on-error=true', '--strict-readiness=true'],
      { address: podIP, port: 8000 },
    );
    assert.deepEqual(await index(), ['3'], "config.pbtxt's default policy: the newest version only");

    cluster = await startCluster(tools!);
    const kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    apps = kc.makeApiClient(AppsV1Api);
    core = kc.makeApiClient(CoreV1Api);
    await installCrds(kc);
    for (const name of [NS, OP_NS]) await core.createNamespace({ body: { metadata: { name } } });
    // The chart's rights and no more: without pods/status the readiness gate could not be set.
    const operatorKc = await applyChartRbac(cluster, tools!.helm!, OP_NS);
    operator = testOperator(operatorKc, { leaseNamespace: OP_NS, identity: 'versions-operator' });
    await operator.start();
    await eventually(async () => (operator.isLeader ? true : undefined), 'operator leads');
  });

  after(async () => {
    stopping = true;
    await client;
    await operator?.stop();
    await cluster?.stop();
    await triton?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a pinned version: loaded on a new pod before it is ready, the repository\'s newest dropped once the API pods run the spec', async () => {
    await custom.createNamespacedCustomObject({
      ...GROUP,
      namespace: NS,
      body: {
        apiVersion: 'cv.recognition.io/v1alpha1',
        kind: 'RecognitionService',
        metadata: { name: 'vision' },
        spec: {
          api: { image: 'recognition-service:0.1.0', databaseUrlSecretRef: { name: 'vision-secrets' }, redisUrlSecretRef: { name: 'vision-secrets' }, replicas: { min: 1, max: 1 } },
          triton: { storageUri: 'pvc://models', modelName: MODEL, modelVersion: '1', replicas: { min: 1, max: 1 } },
        },
      },
    });
    const tritonDeployment = await eventually(async () => apps.readNamespacedDeployment({ name: 'vision-triton', namespace: NS }).catch(() => undefined), "Triton's Deployment");
    const template = tritonDeployment.spec!.template;
    assert.deepEqual(template.spec!.readinessGates?.map((g) => g.conditionType), [GATE]);

    // The kubelet's part: a pod of that template whose Triton is the real one, its container ready.
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'vision-triton-0', labels: template.metadata!.labels },
        spec: {
          readinessGates: template.spec!.readinessGates,
          containers: [{ name: 'triton', image: template.spec!.containers[0].image, ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }] }],
        },
      },
    });
    await core.patchNamespacedPodStatus(
      {
        name: 'vision-triton-0',
        namespace: NS,
        body: {
          status: {
            phase: 'Running',
            podIP,
            podIPs: [{ ip: podIP }],
            conditions: [
              { type: 'ContainersReady', status: 'True' },
              { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );

    await eventually(async () => ((await gate())?.status === 'True' ? true : undefined), 'the readiness gate set');
    // Added, not swapped: the API Deployment has no status yet, so nothing is dropped.
    assert.deepEqual(await index(), ['1', '3']);
    assert.match((await gate())!.message ?? '', /versioned version 1 is loaded/);
    // Events are written without waiting for them: looked for, not read once.
    await eventually(async () => (await events('TritonVersionsLoaded')).some((e) => /vision-triton-0: versioned serves versions 1, 3 \(had 3\)/.test(e.note ?? '')), 'the TritonVersionsLoaded event');

    // The API pods, from now on.
    const d = await apiPodsGiven(['1']);
    client = (async () => {
      while (!stopping) await Promise.all(asked.map(infer));
    })();
    await settle(d);
    await eventually(async () => ((await index()).join() === '1' ? true : undefined), 'version 3 unloaded once the API pods run the spec');
  });

  test('a canary of version 2 is loaded before the API pods are given it; a version the repository lacks is reported', async () => {
    await patchRs({ spec: { canary: { modelVersion: '2', weight: 30 } } });
    const d = await apiPodsGiven(['1', '2']);
    await settle(d);
    await eventually(async () => (answers.get('2') ?? 0) >= 20, 'the canary answering');
    assert.deepEqual(await index(), ['1', '2']);

    // Version 9 is nowhere: Triton takes the policy and loads what it can; the operator asks again and says so.
    await patchRs({ spec: { canary: { modelVersion: '9' } } });
    const degraded = await degradedWith(/version 9/);
    assert.match(degraded.message, /Triton pod vision-triton-0: versioned version 9 not ready after loading \(not in the model repository.*; the API pods keep their settings/);
    assert.equal((await gate())?.status, 'True', 'the stable version is loaded: the pod stays ready');
    assert.deepEqual(versionsOf(await apiDeployment()), ['1', '2'], 'the API pods are not given a version Triton could not load');
    // Back to the good canary.
    await patchRs({ spec: { canary: { modelVersion: '2' } } });
    await settle(await apiPodsGiven(['1', '2']));
  });

  test('promoted for good: version 1 stays while an API pod may ask for it, then is unloaded; no request failed', async () => {
    await patchRs({ spec: { triton: { modelVersion: '2' }, canary: null } });
    const d = await apiPodsGiven(['2']);
    // Not settled: the old pods still ask for 1, and it is still there. The operator has run on
    // this spec (it applied the Deployment); let it run again on the events that follow.
    await eventually(async () => ((answers.get('1') ?? 0) > 0 ? true : undefined), 'the old pods still answered');
    const before = answers.get('1') ?? 0;
    await eventually(async () => ((answers.get('1') ?? 0) >= before + 50 ? true : undefined), 'version 1 still answering while the API rolls');
    assert.deepEqual(await index(), ['1', '2']);
    await settle(d);
    await eventually(async () => ((await index()).join() === '2' ? true : undefined), 'version 1 unloaded once the API pods run the promotion');
    assert.equal((await gate())?.status, 'True');
    assert.match((await gate())!.message ?? '', /versioned version 2 is loaded/);

    stopping = true;
    await client;
    assert.deepEqual(failures, [], 'no request of the API pods failed');
    for (const v of ['1', '2']) assert.ok((answers.get(v) ?? 0) > 0, `version ${v} answered`);
  });

  test('a pod that lost the stable version leaves the Service until the operator has loaded it again', async () => {
    // The model unloaded by hand, and version 2 broken in the repository: the operator loads
    // the model as the repository has it (3, the newest), fails to load 2, and marks the pod not ready.
    const model2 = path.join(dir, 'repo', MODEL, '2', 'model.py');
    await writeFile(model2, 'raise RuntimeError("version 2 is broken")\n');
    assert.equal((await fetch(`${triton.httpUrl}/v2/repository/models/${MODEL}/unload`, { method: 'POST', body: '{}' })).status, 200);
    await eventually(async () => ((await index()).length === 0 ? true : undefined), 'the model unloaded');
    const touch = (n: number) => patchRs({ metadata: { annotations: { 'test/touch': String(n) } } });
    await touch(1);
    const down = await eventually(async () => ((await gate())?.status === 'False' ? gate() : undefined), 'the readiness gate False');
    assert.equal(down.reason, 'StableVersionNotLoaded');
    assert.match(down.message ?? '', /versioned version 2 is not loaded/);
    const degraded = await degradedWith(/version 2 is broken/);
    assert.match(degraded.message, /Triton pod vision-triton-0: POST \/v2\/repository\/models\/versioned\/load: HTTP 400/);
    // Version 2 mended: loaded again, the pod ready again, the repository's newest dropped.
    await copyFile(path.join(REPO_ROOT, 'test', 'triton', 'versioned-model', 'model.py'), model2);
    await touch(2);
    await eventually(async () => ((await gate())?.status === 'True' ? true : undefined), 'the readiness gate True again');
    await eventually(async () => ((await index()).join() === '2' ? true : undefined), 'only version 2 loaded');
  });

  test('a new stable version that cannot load: the pods stay ready on the old one, the API pods keep asking for it', async () => {
    await settle(await apiDeployment());
    await patchRs({ spec: { triton: { modelVersion: '9' } } });
    const degraded = await degradedWith(/version 9 not ready/);
    assert.match(degraded.message, /the API pods keep their settings until it has versioned version 9/);
    const held = await gate();
    assert.equal(held?.status, 'True', 'not taken out of the Service for a version no pod has');
    assert.equal(held?.reason, 'PreviousVersionLoaded');
    assert.match(held?.message ?? '', /versioned version 9 is not loaded yet; versioned version 2, which the API pods ask for, is/);
    assert.deepEqual(versionsOf(await apiDeployment()), ['2'], 'the API pods still ask for 2');
    assert.deepEqual(await index(), ['2']);
    // Back to 2: ready on it again.
    await patchRs({ spec: { triton: { modelVersion: '2' } } });
    await eventually(async () => ((await gate())?.reason === 'VersionsLoaded' ? true : undefined), 'the gate on version 2 again');
  });
});
