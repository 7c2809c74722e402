/**
 * The operator on a whole simulated cluster: the real kube-apiserver, kube-controller-manager
 * (Deployments, ReplicaSets, the HPA controller, the garbage collector) and kube-scheduler,
 * and kwok playing the kubelets of fake nodes (GPU nodes with nvidia.com/gpu capacity and
 * plain CPU nodes). kwok stages (./kwok-stages.yaml) make pods of marked images crash-loop,
 * fail to pull, be OOMKilled, become ready slowly or never; the scheduler itself reports
 * pods no node can take.
 * scripts/k8s-tools.sh builds every tool; under CI=true a missing one fails the suite.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { RecognitionOperator } from '../../../src/operator/operator.js';
import { toClientModel } from '../../../src/operator/kube.js';
import type { Condition, RecognitionService } from '../../../src/operator/api/types.js';
import { TRITON_QUEUE_METRIC } from '../../../src/operator/desired/policies.js';
import { FIELD_MANAGER } from '../../../src/operator/desired/naming.js';
import { addFakeNodes, eventually, fakeNode, findClusterTools, installCrds, startCluster, startControllers, type TestCluster } from '../helpers/cluster.js';
import { startFakeMetricsApi, type FakeMetricsApi } from '../helpers/metrics-api.js';

type Any = any;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const STAGES = path.join(ROOT, 'test/operator/e2e/kwok-stages.yaml');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const NS = 'e2e';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const GOOD_IMAGE = 'recognition-service:0.1.0';

const { tools, missing } = findClusterTools();
if (!tools) console.log(`# operator cluster e2e skipped: ${missing}`);

const yamlDocs = (file: string): Any[] => parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);
const cond = (rs: RecognitionService, type: string): Condition | undefined => rs.status?.conditions?.find((c) => c.type === type);

describe('operator on a simulated cluster (kube-controller-manager, kube-scheduler, kwok)', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let controllers: { stop(): Promise<void> } | undefined;
  let operator: RecognitionOperator | undefined;
  let metricsApi: FakeMetricsApi | undefined;
  let custom: CustomObjectsApi;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;

  const getRs = async (name = 'vision') => (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name })) as RecognitionService;
  const patchRs = (body: Any, name = 'vision') => custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name, body }, merge);
  /** Waits for a status the predicate accepts, for the current generation. */
  const status = (what: string, ok: (rs: RecognitionService) => boolean, timeoutMs = 90_000) =>
    eventually(async () => {
      const rs = await getRs();
      return rs.status?.observedGeneration === rs.metadata.generation && ok(rs) ? rs : undefined;
    }, what, timeoutMs);
  const ready = () => status('Ready', (rs) => cond(rs, 'Ready')?.status === 'True');
  const degraded = (reason: string) => status(`Degraded ${reason}`, (rs) => cond(rs, 'Degraded')?.status === 'True' && cond(rs, 'Degraded')?.reason === reason);

  before(async () => {
    cluster = await startCluster(tools!);
    try {
      controllers = await startControllers(cluster, tools!, STAGES);
      // What metrics-server and a Prometheus adapter give the HPA controller; no load until a test sets one.
      metricsApi = await startFakeMetricsApi(cluster, [TRITON_QUEUE_METRIC]);
    } catch (err) {
      await controllers?.stop();
      await cluster.stop();
      throw err;
    }
    const kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    apps = kc.makeApiClient(AppsV1Api);
    core = kc.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    await installCrds(kc);
    for (const name of [NS, 'recognition-system']) await core.createNamespace({ body: { metadata: { name } } });
    // Three GPU nodes (tainted, as GPU pools are) and two CPU nodes.
    const gpuTaint = [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }];
    await addFakeNodes(kc, [
      ...[0, 1, 2].map((i) => fakeNode(`gpu-${i}`, { 'nvidia.com/gpu': '2' }, { 'nvidia.com/gpu.present': 'true' }, gpuTaint)),
      ...[0, 1].map((i) => fakeNode(`cpu-${i}`, {})),
    ]);

    operator = new RecognitionOperator({
      kubeConfig: kc,
      leaseNamespace: 'recognition-system',
      identity: 'e2e-operator',
      leaseTiming: { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 },
      backoff: { baseDelayMs: 200, maxDelayMs: 3_000 },
      resyncPeriodMs: 30_000,
      clusterDomain: 'e2e.local',
    });
    await operator.start();
    await eventually(async () => (operator!.isLeader ? true : undefined), 'operator leads');
  });

  after(async () => {
    await operator?.stop();
    await metricsApi?.stop();
    await controllers?.stop();
    await cluster?.stop();
  });

  test('a RecognitionService becomes Ready through the real controllers; Triton lands on GPU nodes', async () => {
    const sample = yamlDocs(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'))[0];
    sample.metadata.namespace = NS;
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: sample });
    // The HPA controller lifts the API from 1 replica to its min of 2: never Ready before.
    const rs = await ready();
    assert.ok((rs.status?.api?.availableReplicas ?? 0) >= 2, 'Ready only with replicas.min API pods available');
    assert.equal(rs.status?.triton?.endpoint, 'dns:///vision-triton.e2e.svc.e2e.local:8001', 'the configured cluster domain');
    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=triton' })).items;
    assert.ok(pods.length >= 1);
    for (const p of pods) assert.match(p.spec?.nodeName ?? '', /^gpu-/, `${p.metadata?.name} on a GPU node`);
    // The operator records events after its status write, without waiting for them.
    const eventsApi = cluster.kubeConfig().makeApiClient(EventsV1Api);
    await eventually(async () => {
      const events = (await eventsApi.listNamespacedEvent({ namespace: NS, fieldSelector: 'regarding.name=vision' })).items;
      return events.some((e) => e.reason === 'Created') && events.some((e) => e.reason === 'Ready') ? true : undefined;
    }, 'Created and Ready events');
  });

  test('a Triton pod no node can take: Degraded Unschedulable with the scheduler\'s message; recovers', async () => {
    await patchRs({ spec: { triton: { gpus: 4 } } });
    const rs = await degraded('Unschedulable');
    assert.match(cond(rs, 'Degraded')!.message, /cannot be scheduled: 0\/5 nodes are available: .*Insufficient nvidia\.com\/gpu/);
    assert.equal(cond(rs, 'Ready')?.status, 'False');
    await patchRs({ spec: { triton: { gpus: 1 } } });
    await ready();
  });

  for (const [image, reason, message] of [
    ['e2e.invalid/crashloop:1', 'CrashLoopBackOff', /container api: CrashLoopBackOff \(last exit 1 Error\), 6 restarts/],
    ['e2e.invalid/pullerror:1', 'ImagePullBackOff', /container api: ImagePullBackOff: Back-off pulling image/],
    ['e2e.invalid/oomkilled:1', 'OOMKilled', /container api was OOMKilled/],
  ] as const) {
    test(`API pods with ${reason}: Degraded naming the pod; Ready again after a fix`, async () => {
      await patchRs({ spec: { api: { image } } });
      const rs = await degraded(reason);
      assert.match(cond(rs, 'Degraded')!.message, /pod vision-api-[a-z0-9]+-[a-z0-9]+ /);
      assert.match(cond(rs, 'Degraded')!.message, message);
      assert.equal(cond(rs, 'Ready')?.status, 'False');
      await patchRs({ spec: { api: { image: GOOD_IMAGE } } });
      await ready();
    });
  }

  test('a rollout: Progressing says how many replicas are updated; Ready only with min pods of the new template; then Ready for the new generation', async () => {
    const SLOW = 'e2e.invalid/slow:2'; // kwok makes these pods Ready 4 s after they are scheduled
    const min = 2; // the sample's api.replicas.min, which the HPA keeps
    await ready();
    await patchRs({ spec: { api: { image: SLOW } } });
    const seen: Array<{ ready?: string; progressing?: string; message?: string; newReady: number }> = [];
    const done = await eventually(async () => {
      const rs = await getRs();
      const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=api' })).items;
      // Pods only become ready during this rollout: a count taken after the status is no smaller than the operator saw.
      const newReady = pods.filter(
        (p) => !p.metadata?.deletionTimestamp && p.spec?.containers[0].image === SLOW && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      if (rs.status?.observedGeneration !== rs.metadata.generation) return undefined;
      seen.push({ ready: cond(rs, 'Ready')?.status, progressing: cond(rs, 'Progressing')?.status, message: cond(rs, 'Progressing')?.message, newReady });
      return cond(rs, 'Ready')?.status === 'True' ? rs : undefined;
    }, 'Ready after the rollout', 120_000);
    for (const s of seen) if (s.ready === 'True') assert.ok(s.newReady >= min, `Ready with ${s.newReady} ready pods of the new template: ${JSON.stringify(s)}`);
    assert.ok(seen.some((s) => s.ready === 'False'), 'not Ready while fewer than min new pods serve');
    const rolling = seen.filter((s) => s.progressing === 'True').map((s) => s.message ?? '');
    assert.ok(rolling.some((m) => /deployment vision-api: [0-2] of 2 replicas updated, \d+ available/.test(m)), `Progressing with the count: ${JSON.stringify(rolling)}`);
    assert.equal(done.status?.observedGeneration, done.metadata.generation);
    // Ready comes with min new pods; an old pod may still be terminating, so the rollout
    // itself (Progressing) may end a moment later.
    const settled = await eventually(async () => {
      const rs = await getRs();
      return cond(rs, 'Progressing')?.status === 'False' ? rs : undefined;
    }, 'Progressing False after the rollout', 60_000);
    assert.equal(cond(settled, 'Ready')?.status, 'True');
    assert.equal(settled.status?.api?.updatedReplicas, 2);
    const dep = await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS });
    assert.equal(dep.spec?.template.spec?.containers[0].image, SLOW);
    assert.equal(dep.status?.updatedReplicas, dep.status?.replicas, 'no old pods left');
  });

  test('a rollout past its progress deadline: Degraded ProgressDeadlineExceeded, Ready false; recovers', async () => {
    // An SRE's own, shorter deadline: a field the operator does not set, so it stays theirs.
    const sre = (spec?: Any) =>
      objects.patch(
        toClientModel({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'vision-api', namespace: NS }, ...(spec ? { spec } : {}) }),
        undefined, undefined, 'sre', true, PatchStrategy.ServerSideApply,
      );
    await sre({ progressDeadlineSeconds: 8 });
    await patchRs({ spec: { api: { image: 'e2e.invalid/neverready:1' } } });
    const rs = await degraded('ProgressDeadlineExceeded');
    assert.match(cond(rs, 'Degraded')!.message, /^deployment vision-api: ReplicaSet "vision-api-[a-z0-9]+" has timed out progressing/);
    assert.equal(cond(rs, 'Ready')?.status, 'False');
    assert.equal(cond(rs, 'Ready')?.reason, 'ProgressDeadlineExceeded');
    assert.equal(cond(rs, 'Progressing')?.status, 'False');
    assert.equal(cond(rs, 'Progressing')?.reason, 'Stalled');
    assert.equal((await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS })).spec?.progressDeadlineSeconds, 8, "the SRE's field is left alone");
    await patchRs({ spec: { api: { image: GOOD_IMAGE } } });
    await ready();
    await sre(); // gives the field back (the API server defaults it again)
  });

  test('the HPA controller scales both components on their default metrics; the operator never writes replicas; turning autoscaling on keeps the running count', async () => {
    const component = (pod: { metadata?: { labels?: Record<string, string> } }) => pod.metadata?.labels?.['app.kubernetes.io/component'];
    const replicasOf = async (c: 'api' | 'triton') => (await apps.readNamespacedDeployment({ name: `vision-${c}`, namespace: NS })).spec?.replicas;
    const childWrites = async () => (await operator!.metrics.childWrites.get()).values.reduce((n, v) => n + v.value, 0);
    const deploymentAt = (c: 'api' | 'triton', n: number) =>
      eventually(async () => ((await replicasOf(c)) === n ? true : undefined), `vision-${c} at ${n} replicas`, 90_000);

    // Autoscaling off at 3 API pods, then on (2-4) with the API at its 70 % CPU target
    // (350m of 500m requested): the Deployment must stay at 3 all along, not fall to 1.
    await patchRs({ spec: { autoscaling: { enabled: false }, api: { replicas: { min: 3, max: 3 } } } });
    await status('3 API pods Ready', (rs) => cond(rs, 'Ready')?.status === 'True' && rs.status?.api?.availableReplicas === 3);
    metricsApi!.setLoad((pod) => (component(pod) === 'api' ? { cpu: '350m' } : { custom: { [TRITON_QUEUE_METRIC]: '10000' } }));
    await patchRs({ spec: { autoscaling: { enabled: true }, api: { replicas: { min: 2, max: 4 } } } });
    // Sampled from the patch until the HPA controller has read the pods' CPU and decided: a
    // drop to 1 (the operator writing replicas, or leaving them to the API server's default)
    // would come before that decision and last until it.
    const autoscaling = cluster.kubeConfig().makeApiClient(AutoscalingV2Api);
    const counts: Array<number | undefined> = [];
    const hpa = await eventually(async () => {
      counts.push(await replicasOf('api'));
      const h = await autoscaling.readNamespacedHorizontalPodAutoscaler({ name: 'vision-api', namespace: NS }).catch(() => undefined);
      return h?.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization !== undefined ? h : undefined;
    }, 'the HPA reads the API pods\' CPU', 90_000);
    counts.push(await replicasOf('api'));
    assert.equal(hpa.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization, 70, 'the HPA reads the API pods\' CPU through metrics.k8s.io');
    assert.equal(hpa.status?.desiredReplicas, 3, 'at its target, the HPA keeps the running count');
    assert.ok(counts.every((n) => n === 3), `the API Deployment stayed at 3 while autoscaling was turned on: ${counts.join(',')}`);

    // Load: the API at 200 % of its CPU request whatever its count (so up to replicas.max);
    // Triton's queue at 3x its 20 ms target on one pod, a total that more pods share (so
    // 3 pods, ceil(1 × 60000 / 20000), at the target: the HPA holds there).
    const writesBefore = await childWrites();
    metricsApi!.setLoad((pod, running) => (component(pod) === 'api' ? { cpu: '1' } : { custom: { [TRITON_QUEUE_METRIC]: String(Math.round(60_000 / running)) } }));
    await deploymentAt('api', 4); // replicas.max
    await deploymentAt('triton', 3);
    await status('Ready with 4 API and 3 Triton pods', (r) =>
      cond(r, 'Ready')?.status === 'True' && r.status?.api?.availableReplicas === 4 && r.status?.api?.summary === '4/4' && r.status?.triton?.availableReplicas === 3);
    const tritonPods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=triton' })).items;
    for (const p of tritonPods) assert.match(p.spec?.nodeName ?? '', /^gpu-/, `${p.metadata?.name} on a GPU node`);
    const dep = await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS });
    const owners = (dep.metadata?.managedFields ?? []).filter((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('"f:replicas"') && f.subresource !== 'status').map((f) => f.manager);
    assert.ok(!owners.includes(FIELD_MANAGER), `spec.replicas is the HPA's, not the operator's: ${owners.join(',')}`);

    // Load gone: back to each component's min once the (5 s) downscale stabilization passes.
    metricsApi!.setLoad((pod) => (component(pod) === 'api' ? { cpu: '50m' } : { custom: { [TRITON_QUEUE_METRIC]: '0' } }));
    await deploymentAt('api', 2);
    await deploymentAt('triton', 1);
    await status('Ready at the mins', (r) => cond(r, 'Ready')?.status === 'True' && r.status?.api?.summary === '2/2' && r.status?.triton?.summary === '1/1');
    assert.equal(await childWrites(), writesBefore, 'scaling up and down cost the operator no child writes');
    metricsApi!.setLoad(() => undefined);
  });

  test('scale down with autoscaling off: the Deployment and its pods follow, status stays Ready', async () => {
    await patchRs({ spec: { autoscaling: { enabled: false }, api: { replicas: { min: 1, max: 1 } } } });
    await eventually(async () => ((await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS })).spec?.replicas === 1 ? true : undefined), 'Deployment at 1');
    await eventually(async () => {
      const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app.kubernetes.io/component=api' })).items;
      return pods.length === 1 ? true : undefined;
    }, 'one API pod left');
    // The Deployment's status follows its pods a moment later, and the operator's follows
    // the Deployment's: Ready may first be written while the Deployment still counts 2.
    await status('Ready with API 1/1', (rs) => cond(rs, 'Ready')?.status === 'True' && rs.status?.api?.summary === '1/1');
  });

  test('deleting the RecognitionService removes every child through the garbage collector', async () => {
    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' });
    await eventually(async () => {
      const deps = (await apps.listNamespacedDeployment({ namespace: NS })).items;
      const pods = (await core.listNamespacedPod({ namespace: NS })).items;
      const svcs = (await core.listNamespacedService({ namespace: NS })).items;
      return deps.length + pods.length + svcs.length === 0 ? true : undefined;
    }, 'children and pods gone', 90_000);
  });
});
