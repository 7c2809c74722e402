/**
 * The operator against a real etcd + kube-apiserver on loopback (scripts/k8s-tools.sh
 * installs them). No kubelet or controllers: the tests write Deployment and Pod status
 * themselves to play the rollouts and crash loops the operator must report.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  NetworkingV1Api,
  AutoscalingV2Api,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  dumpYaml,
  V1MicroTime,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { RecognitionOperator } from '../../src/operator/operator.js';
import { LeaderElector } from '../../src/operator/leader-election.js';
import { withDefaults } from '../../src/operator/api/defaults.js';
import { sameJson } from '../../src/operator/status.js';
import { toClientModel } from '../../src/operator/kube.js';
import type { Condition, RecognitionService } from '../../src/operator/api/types.js';
import {
  applyChartRbac,
  eventually,
  findTools,
  freePort,
  installCrds,
  SERVICE_MONITOR_CRD,
  startCluster,
  TEST_OPERATOR_TIMING,
  type TestCluster,
} from './helpers/cluster.js';

type Any = any;
/** Plain JSON objects from (multi-document) YAML. */
const parseYaml = (text: string): Any[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SAMPLES = path.join(ROOT, 'crds/samples');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const NS = 'team-a';
const OP_NS = 'recognition-system';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const FAST = { ...TEST_OPERATOR_TIMING, resyncPeriodMs: 60_000 };

const { tools, missing } = findTools();
if (!tools) console.log(`# operator cluster tests skipped: ${missing}`);

function yamlDocs(file: string): KubernetesObject[] {
  return parseYaml(fs.readFileSync(file, 'utf8')).filter(Boolean) as KubernetesObject[];
}

/** An object as the API server sent it (client-node models rename `from` to `_from`...). */
const wire = (obj: KubernetesObject): Any => parseYaml(dumpYaml(obj))[0];
/** client-node returns model class instances; compare their JSON. */
const plain = (v: unknown): Any => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

function statusOf(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

async function notFound(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (err) {
    if (statusOf(err) === 404) return true;
    throw err;
  }
}

function condition(rs: RecognitionService, type: string): Condition | undefined {
  return rs.status?.conditions?.find((c) => c.type === type);
}

describe('operator against a real kube-apiserver', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let kc: KubeConfig;
  let operatorKc: KubeConfig;
  let custom: CustomObjectsApi;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;
  let leader: RecognitionOperator | undefined;
  let standby: RecognitionOperator | undefined;
  let rbacFromChart = false;

  const getRs = async (name = 'vision', ns = NS) =>
    (await custom.getNamespacedCustomObject({ ...GROUP, namespace: ns, name })) as RecognitionService;
  const getDep = (name: string) => apps.readNamespacedDeployment({ name, namespace: NS });

  before(async () => {
    cluster = await startCluster(tools!);
    kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    apps = kc.makeApiClient(AppsV1Api);
    core = kc.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);

    // The CRD from crds/, and a minimal stand-in for Prometheus Operator's ServiceMonitor CRD.
    await installCrds(kc, [SERVICE_MONITOR_CRD]);
    for (const name of [NS, OP_NS]) await core.createNamespace({ body: { metadata: { name } } });

    // Run the operator with exactly the chart's RBAC, when helm is there to render it.
    rbacFromChart = Boolean(tools!.helm);
    operatorKc = tools!.helm ? await applyChartRbac(cluster, tools!.helm, OP_NS) : kc;
    leader = new RecognitionOperator({ kubeConfig: operatorKc, leaseNamespace: OP_NS, identity: 'operator-a', ...FAST });
    await leader.start();
    await eventually(async () => (leader!.isLeader ? true : undefined), 'operator-a to lead');
  });

  after(async () => {
    await leader?.stop();
    await standby?.stop();
    await cluster?.stop();
  });

  test('create: every child exists, owned by the resource, with the right specs; status is written', async () => {
    console.log(`# operator runs with ${rbacFromChart ? "the chart's least-privilege RBAC" : 'admin rights (helm not installed)'}`);
    const sample = yamlDocs(path.join(SAMPLES, 'recognitionservice-minimal.yaml'))[0] as Any;
    sample.metadata.namespace = NS;
    const created = (await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: sample })) as RecognitionService;

    // The CRD's defaults and the code's agree.
    assert.ok(sameJson(withDefaults({ ...sample, metadata: created.metadata }).spec, created.spec), 'CRD defaults = withDefaults()');

    const owned = (o: Any) => {
      assert.deepEqual(
        o.metadata.ownerReferences.map((r: Any) => [r.kind, r.name, r.uid, r.controller, r.blockOwnerDeletion]),
        [['RecognitionService', 'vision', created.metadata.uid, true, true]],
        `${o.kind} ${o.metadata.name} owned by the resource`,
      );
      return o;
    };
    const read = (apiVersion: string, kind: string, name: string) =>
      eventually(async () => owned(await objects.read({ apiVersion, kind, metadata: { name, namespace: NS } })), `${kind} ${name}`);

    const api = (await read('apps/v1', 'Deployment', 'vision-api')) as V1Deployment;
    const c = api.spec!.template.spec!.containers[0];
    assert.equal(c.image, 'recognition-service:0.1.0');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(c.env?.find((e) => e.name === 'TRITON_URL')?.value, 'dns:///vision-triton.team-a.svc.cluster.local:8001');
    assert.deepEqual(plain(c.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef), { name: 'vision-secrets', key: 'DATABASE_URL' });
    const triton = (await read('apps/v1', 'Deployment', 'vision-triton')) as V1Deployment;
    assert.equal(triton.spec!.template.spec!.containers[0].resources?.limits?.['nvidia.com/gpu'], '1');
    assert.deepEqual(plain(triton.spec!.template.spec!.containers[0].envFrom), [{ secretRef: { name: 'vision-model-storage' } }]);
    const svc = (await read('v1', 'Service', 'vision-triton'));
    assert.equal(svc.spec.clusterIP, 'None');
    await read('v1', 'Service', 'vision-api');
    const hpa = (await read('autoscaling/v2', 'HorizontalPodAutoscaler', 'vision-api'));
    assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas], [2, 10]);
    await read('autoscaling/v2', 'HorizontalPodAutoscaler', 'vision-triton');
    await read('policy/v1', 'PodDisruptionBudget', 'vision-api');
    await read('policy/v1', 'PodDisruptionBudget', 'vision-triton');
    const np = wire(await read('networking.k8s.io/v1', 'NetworkPolicy', 'vision-triton'));
    assert.equal(np.spec.ingress[0].from[0].podSelector.matchLabels['app.kubernetes.io/component'], 'api');
    await read('monitoring.coreos.com/v1', 'ServiceMonitor', 'vision');

    const rs = await eventually(async () => {
      const r = await getRs();
      return r.status?.observedGeneration === r.metadata.generation && condition(r, 'Ready') ? r : undefined;
    }, 'status written');
    assert.equal(rs.status?.url, 'http://vision-api.team-a.svc:8080');
    assert.equal(condition(rs, 'Ready')?.status, 'False');
    assert.equal(condition(rs, 'Progressing')?.status, 'True');
    assert.equal(rs.status?.triton?.endpoint, 'dns:///vision-triton.team-a.svc.cluster.local:8001');
  });

  test('spec change: children are updated in place; switched-off parts are removed', async () => {
    const before = await getDep('vision-api');
    await custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: NS, name: 'vision', body: { spec: { api: { image: 'recognition-service:0.2.0', replicas: { min: 3, max: 3 } }, triton: { gpus: 2 }, networkPolicy: { enabled: false } } } },
      merge,
    );
    const after = await eventually(async () => {
      const d = await getDep('vision-api');
      return d.spec?.template.spec?.containers[0].image === 'recognition-service:0.2.0' ? d : undefined;
    }, 'API image updated');
    assert.equal(after.metadata?.uid, before.metadata?.uid, 'same Deployment, updated in place');
    assert.equal(after.spec?.replicas, 3, 'no HPA when min = max: the Deployment holds the count');
    await eventually(async () => ((await getDep('vision-triton')).spec?.template.spec?.containers[0].resources?.limits?.['nvidia.com/gpu'] === '2' ? true : undefined), 'GPU limit 2');
    const hpas = kc.makeApiClient(AutoscalingV2Api);
    await eventually(async () => ((await notFound(hpas.readNamespacedHorizontalPodAutoscaler({ name: 'vision-api', namespace: NS }))) ? true : undefined), 'API HPA removed');
    const net = kc.makeApiClient(NetworkingV1Api);
    await eventually(async () => ((await notFound(net.readNamespacedNetworkPolicy({ name: 'vision-triton', namespace: NS }))) ? true : undefined), 'NetworkPolicy removed');
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision', body: { spec: { networkPolicy: { enabled: true } } } }, merge);
    await eventually(async () => ((await net.readNamespacedNetworkPolicy({ name: 'vision-triton', namespace: NS })) ? true : undefined), 'NetworkPolicy back');
  });

  test('a child deleted or edited by hand is restored', async () => {
    const svc = await core.readNamespacedService({ name: 'vision-api', namespace: NS });
    await core.deleteNamespacedService({ name: 'vision-api', namespace: NS });
    const back = await eventually(async () => {
      try {
        const s = await core.readNamespacedService({ name: 'vision-api', namespace: NS });
        return s.metadata?.uid !== svc.metadata?.uid ? s : undefined;
      } catch (err) {
        if (statusOf(err) === 404) return undefined;
        throw err;
      }
    }, 'deleted Service recreated');
    assert.equal(back.metadata?.ownerReferences?.[0]?.name, 'vision');

    await apps.patchNamespacedDeployment(
      {
        name: 'vision-triton', namespace: NS, fieldManager: 'kubectl-edit',
        body: { spec: { template: { spec: { containers: [{ name: 'triton', image: 'hand-edited:latest' }] } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    await eventually(async () => {
      const image = (await getDep('vision-triton')).spec?.template.spec?.containers[0].image;
      return image === 'nvcr.io/nvidia/tritonserver:24.08-py3' ? true : undefined;
    }, 'hand edit reverted');
  });

  test('status through a rollout: progressing → ready → degraded on a crash loop → ready again', async () => {
    const setStatus = async (name: string, s: (d: V1Deployment) => Record<string, number>) => {
      const d = await getDep(name);
      await apps.patchNamespacedDeploymentStatus({ name, namespace: NS, body: { status: { observedGeneration: d.metadata?.generation, ...s(d) } } }, merge);
    };
    const want = (d: V1Deployment) => d.spec?.replicas ?? 1;
    // Half-way: one replica updated, the old ones still there.
    await setStatus('vision-api', (d) => ({ replicas: want(d) + 1, updatedReplicas: 1, readyReplicas: want(d), availableReplicas: want(d) }));
    await setStatus('vision-triton', (d) => ({ replicas: want(d), updatedReplicas: want(d), readyReplicas: want(d), availableReplicas: want(d) }));
    let rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'TritonReady')?.status === 'True' && condition(r, 'Progressing')?.status === 'True' ? r : undefined;
    }, 'Progressing while the API rolls out');
    assert.equal(condition(rs, 'Ready')?.status, 'False');
    assert.equal(condition(rs, 'ApiReady')?.status, 'False');

    await setStatus('vision-api', (d) => ({ replicas: want(d), updatedReplicas: want(d), readyReplicas: want(d), availableReplicas: want(d) }));
    rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'Ready')?.status === 'True' ? r : undefined;
    }, 'Ready once both roll out');
    assert.equal(condition(rs, 'Progressing')?.status, 'False');
    assert.equal(condition(rs, 'Degraded')?.status, 'False');
    assert.equal(rs.status?.api?.summary, '3/3');
    if (tools!.kubectl) {
      // What an SRE sees: the short name and the printer columns.
      const table = execFileSync(tools!.kubectl, ['--kubeconfig', cluster.kubeConfigFile(), 'get', 'recsvc', '-n', NS], { encoding: 'utf8' });
      assert.match(table, /^NAME\s+READY\s+REASON\s+API\s+TRITON\s+ROLLOUT\s+CANARY\s+AGE\n/);
      assert.match(table, /\nvision\s+True\s+Available\s+3\/3\s+1\/1\s+Stable\s+0\s+\S+\n/);
      const wide = execFileSync(tools!.kubectl, ['--kubeconfig', cluster.kubeConfigFile(), 'get', 'recsvc', '-n', NS, '-o', 'wide'], { encoding: 'utf8' });
      assert.match(wide, /\s+http:\/\/vision-api\.team-a\.svc:8080\s+API and Triton are ready\n/);
    }

    // A Triton pod that crash-loops (a model that will not load): the Deployment still counts it.
    await core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: {
          name: 'vision-triton-7d9f-x1',
          labels: { 'app.kubernetes.io/name': 'recognition-service', 'app.kubernetes.io/instance': 'vision', 'app.kubernetes.io/component': 'triton', 'app.kubernetes.io/managed-by': 'recognition-operator' },
        },
        spec: { containers: [{ name: 'triton', image: 'nvcr.io/nvidia/tritonserver:24.08-py3' }] },
      },
    });
    await core.patchNamespacedPodStatus(
      {
        name: 'vision-triton-7d9f-x1', namespace: NS,
        body: {
          status: {
            phase: 'Running',
            containerStatuses: [{
              name: 'triton', image: 'nvcr.io/nvidia/tritonserver:24.08-py3', imageID: '', ready: false, restartCount: 4,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error' } },
            }],
          },
        },
      },
      merge,
    );
    rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'Degraded')?.status === 'True' ? r : undefined;
    }, 'Degraded on crash loop');
    assert.equal(condition(rs, 'Ready')?.status, 'False');
    assert.equal(condition(rs, 'Ready')?.reason, 'CrashLoopBackOff');
    assert.equal(condition(rs, 'TritonReady')?.status, 'False');
    assert.equal(rs.status?.lastFailure?.component, 'triton');
    assert.match(rs.status?.lastFailure?.message ?? '', /vision-triton-7d9f-x1.*CrashLoopBackOff/);

    await core.deleteNamespacedPod({ name: 'vision-triton-7d9f-x1', namespace: NS, gracePeriodSeconds: 0 });
    rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'Ready')?.status === 'True' ? r : undefined;
    }, 'Ready again');
    assert.equal(rs.status?.lastFailure?.reason, 'CrashLoopBackOff', 'the last failure is kept');
  });

  test('status is written only when it changed', async () => {
    const count = async () => ((await leader!.metrics.reconciles.get()).values.find((v) => v.labels.result === 'success')?.value ?? 0);
    // The previous step's reconciles may still be writing status: start once the resource has
    // stopped changing (the same resourceVersion a second apart).
    let rv = (await getRs()).metadata.resourceVersion;
    for (let settled = false, tries = 0; !settled && tries < 30; tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = (await getRs()).metadata.resourceVersion;
      settled = now === rv;
      rv = now;
    }
    const n = await count();
    // An edit of a field the operator does not manage: a reconcile runs, nothing changes.
    await core.patchNamespacedService({ name: 'vision-api', namespace: NS, body: { metadata: { annotations: { note: 'hello' } } } }, merge);
    await eventually(async () => ((await count()) > n ? true : undefined), 'a reconcile after the edit');
    assert.equal((await getRs()).metadata.resourceVersion, rv);
  });

  test('a child the API server refuses: Degraded ReconcileError, retried with backoff, recovers', async () => {
    const errors = async () => (await leader!.metrics.reconciles.get()).values.find((v) => v.labels.result === 'error')?.value ?? 0;
    const before = await errors();
    // Passes the CRD (valueFrom is free-form) but not Deployment validation.
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision', body: { spec: { api: { env: [{ name: 'BROKEN', valueFrom: {} }] } } } }, merge);
    let rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'Degraded')?.reason === 'ReconcileError' ? r : undefined;
    }, 'Degraded ReconcileError');
    assert.equal(condition(rs, 'Ready')?.status, 'False');
    assert.equal(rs.status?.lastFailure?.component, 'operator');
    assert.match(rs.status?.lastFailure?.message ?? '', /HTTP 422/);
    await eventually(async () => ((await errors()) >= before + 2 ? true : undefined), 'retried after a backoff');

    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision', body: { spec: { api: { env: null } } } }, merge);
    rs = await eventually(async () => {
      const r = await getRs();
      return condition(r, 'Degraded')?.status === 'False' ? r : undefined;
    }, 'recovered');
    assert.equal(rs.status?.lastFailure?.reason, 'ReconcileError', 'the last failure is kept');
  });

  /** API requests of the leader by method (and code), from rest_client_requests_total. */
  const requests = async (method: string, code?: string) =>
    (await leader!.metrics.requests.get()).values
      .filter((v) => v.labels.method === method && (code === undefined || v.labels.code === code))
      .reduce((n, v) => n + v.value, 0);
  const successes = async () => (await leader!.metrics.reconciles.get()).values.find((v) => v.labels.result === 'success')?.value ?? 0;
  const failures = async () => (await leader!.metrics.reconciles.get()).values.find((v) => v.labels.result === 'error')?.value ?? 0;
  const newResource = (name: string, spec: Any = {}): Any => {
    const o = yamlDocs(path.join(SAMPLES, 'recognitionservice-minimal.yaml'))[0] as Any;
    o.metadata = { name, namespace: NS };
    o.spec = { ...o.spec, ...spec, api: { ...o.spec.api, ...(spec.api ?? {}) } };
    return o;
  };
  const eventsFor = async (name: string) =>
    (await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: `regarding.name=${name}` })).items;
  type KubeEvent = Awaited<ReturnType<typeof eventsFor>>[number];
  /**
   * The first event on the resource that matches, once it is there. The operator records
   * events fire-and-forget (src/operator/events.ts: the POST is not awaited), after the
   * apply or status write that a test waits for: reading them once right after is a race.
   */
  const eventFor = (name: string, what: string, match: (e: KubeEvent) => boolean) =>
    eventually(async () => (await eventsFor(name)).find(match), `${what} event on ${name}`);

  // Issue 15, point 1.
  test('turning autoscaling on keeps the running replica count (handed over to the HPA, not reset to 1)', async () => {
    await custom.createNamespacedCustomObject({
      ...GROUP, namespace: NS,
      body: newResource('scaler', { api: { replicas: { min: 3, max: 6 } }, autoscaling: { enabled: false } }),
    });
    await eventually(async () => ((await getDep('scaler-api')).spec?.replicas === 3 ? true : undefined), 'scaler-api at 3 replicas');
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'scaler', body: { spec: { autoscaling: { enabled: true } } } }, merge);
    const hpas = kc.makeApiClient(AutoscalingV2Api);
    await eventually(async () => ((await hpas.readNamespacedHorizontalPodAutoscaler({ name: 'scaler-api', namespace: NS })) ? true : undefined), 'HPA created');
    await eventually(async () => {
      const d = await getDep('scaler-api');
      return d.metadata?.annotations?.['cv.recognition.io/desired-hash'] && !(d.metadata.managedFields ?? []).some((m) => m.manager === 'recognition-operator' && JSON.stringify(m.fieldsV1).includes('"f:replicas"')) ? d : undefined;
    }, 'the operator no longer owns replicas');
    for (let i = 0; i < 5; i++) {
      assert.equal((await getDep('scaler-api')).spec?.replicas, 3, 'replicas kept while the HPA takes over');
      await new Promise((r) => setTimeout(r, 200));
    }
    // A Created event through events.k8s.io.
    const created = await eventFor('scaler', 'a Created event for Deployment team-a/scaler-api', (e) => e.reason === 'Created' && /Deployment team-a\/scaler-api/.test(e.note ?? ''));
    assert.equal(created.reportingController, 'cv.recognition.io/recognition-operator');
  });

  // Issue 15, points 6 and 7.
  test('a child status change costs no write; a switched-off ServiceMonitor is not deleted again and again', async () => {
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'scaler', body: { spec: { monitoring: { serviceMonitor: { enabled: false } } } } }, merge);
    await eventually(async () => ((await notFound(objects.read({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'scaler', namespace: NS } }))) ? true : undefined), 'ServiceMonitor removed');
    // Settle: the status of the spec change is written.
    await eventually(async () => {
      const r = await getRs('scaler');
      return r.status?.observedGeneration === r.metadata.generation ? true : undefined;
    }, 'status of the change written');
    await new Promise((r) => setTimeout(r, 1500));
    const patches = await requests('PATCH');
    const deletes = await requests('DELETE');
    const n = await successes();
    const hpas = kc.makeApiClient(AutoscalingV2Api);
    for (let i = 1; i <= 20; i++) {
      const hpa = await hpas.readNamespacedHorizontalPodAutoscaler({ name: 'scaler-api', namespace: NS });
      hpa.status = { currentReplicas: 3, desiredReplicas: 3, currentMetrics: [], lastScaleTime: new Date(Date.now() - i * 1000) };
      await hpas.replaceNamespacedHorizontalPodAutoscalerStatus({ name: 'scaler-api', namespace: NS, body: hpa });
    }
    await eventually(async () => ((await successes()) >= n + 3 ? true : undefined), 'reconciles after the HPA status updates');
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await requests('PATCH')) - patches, 0, 'no apply and no status write for HPA status updates');
    assert.equal((await requests('DELETE')) - deletes, 0, 'no DELETE of the absent ServiceMonitor');
    assert.equal(await requests('DELETE', '404'), 0, 'never a DELETE answered 404');
  });

  // Issue 15, point 5.
  test('an object with a child\'s name that belongs to someone else is never adopted, changed or deleted', async () => {
    const foreign: Any = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'foreign-api', namespace: NS, labels: { app: 'theirs' } },
      spec: { replicas: 1, selector: { matchLabels: { app: 'theirs' } }, template: { metadata: { labels: { app: 'theirs' } }, spec: { containers: [{ name: 'c', image: 'theirs:1' }] } } },
    };
    const theirs = await apps.createNamespacedDeployment({ namespace: NS, body: foreign });
    const hpas = kc.makeApiClient(AutoscalingV2Api);
    await hpas.createNamespacedHorizontalPodAutoscaler({
      namespace: NS,
      body: { metadata: { name: 'foreign-triton', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'elsewhere' }, minReplicas: 1, maxReplicas: 2 } },
    });
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: newResource('foreign', { autoscaling: { enabled: false } }) });
    const rs = await eventually(async () => {
      const r = await getRs('foreign');
      return condition(r, 'Degraded')?.status === 'True' ? r : undefined;
    }, 'Degraded on the conflict');
    assert.equal(condition(rs, 'Degraded')?.reason, 'ReconcileError');
    assert.match(condition(rs, 'Degraded')?.message ?? '', /Deployment team-a\/foreign-api exists and is not controlled by this RecognitionService/);
    assert.equal(condition(rs, 'Ready')?.status, 'False');
    // The other children are made all the same.
    await eventually(async () => ((await getDep('foreign-triton')).metadata?.ownerReferences?.[0]?.name === 'foreign' ? true : undefined), 'the other children');
    // The refusal is recorded during the apply but fire-and-forget (its POST is not awaited, so
    // it may land after the status above): wait for the event itself.
    const refused = await eventFor('foreign', 'an AdoptionRefused', (e) => e.reason === 'AdoptionRefused');
    assert.equal(refused.type, 'Warning');
    assert.match(refused.note ?? '', /foreign-api/);
    // An OwnershipConflict is retried with backoff: after two more attempts, none has touched
    // the foreign objects or recorded the refusal again.
    const attempts = await failures();
    await eventually(async () => ((await failures()) >= attempts + 2 ? true : undefined), 'two retries of the conflicting resource');
    const still = await getDep('foreign-api');
    assert.equal(still.metadata?.resourceVersion, theirs.metadata?.resourceVersion, 'not written');
    assert.equal(still.metadata?.ownerReferences, undefined);
    assert.ok(await hpas.readNamespacedHorizontalPodAutoscaler({ name: 'foreign-triton', namespace: NS }), 'a foreign HPA is not deleted');
    assert.equal((await eventsFor('foreign')).filter((e) => e.reason === 'AdoptionRefused').length, 1, 'repeats are rate-limited');

    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'foreign' });
    await apps.deleteNamespacedDeployment({ name: 'foreign-api', namespace: NS });
    await hpas.deleteNamespacedHorizontalPodAutoscaler({ name: 'foreign-triton', namespace: NS });
  });

  // Issue 15: field-manager conflicts are reported, not forced, except on fields the operator must own.
  test('a field another manager holds is left to it and reported (FieldConflict); a must-own field is taken back', async () => {
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: newResource('shared', { autoscaling: { enabled: false } }) });
    const container = async () => (await getDep('shared-api')).spec!.template.spec!.containers[0];
    await eventually(async () => ((await getDep('shared-api').catch(() => undefined))?.metadata?.annotations?.['cv.recognition.io/desired-hash'] ? true : undefined), 'shared-api applied');
    assert.equal((await container()).resources?.limits?.memory, '1Gi');
    // An SRE's own manifest, as `kubectl apply --server-side --force-conflicts --field-manager=someone` sends it.
    const theirs = (c: Any) =>
      objects.patch(
        toClientModel({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shared-api', namespace: NS }, ...(c ? { spec: { template: { spec: { containers: [{ name: 'api', ...c }] } } } } : {}) }),
        undefined, undefined, 'someone', true, PatchStrategy.ServerSideApply,
      );
    await theirs({ resources: { limits: { memory: '2Gi' } } });
    let rs = await eventually(async () => {
      const r = await getRs('shared');
      return condition(r, 'Degraded')?.reason === 'FieldConflict' ? r : undefined;
    }, 'Degraded FieldConflict');
    assert.match(
      condition(rs, 'Degraded')!.message,
      /^Deployment team-a\/shared-api: \.spec\.template\.spec\.containers\[name="api"\]\.resources\.limits\.memory \(field manager "someone"\) differs from the spec; left to that manager, not forced/,
    );
    assert.equal(condition(rs, 'Ready')?.reason, 'FieldConflict');
    assert.equal(rs.status?.lastFailure?.component, 'operator');
    assert.equal((await container()).resources?.limits?.memory, '2Gi', "the other manager's value stays");
    const memoryOwners = (d: V1Deployment) =>
      (d.metadata?.managedFields ?? []).filter((m) => JSON.stringify(m.fieldsV1).includes('"f:limits":{"f:memory"')).map((m) => m.manager);
    assert.deepEqual(memoryOwners(await getDep('shared-api')), ['someone'], 'the operator gave the field up');
    const event = await eventFor('shared', 'a FieldConflict', (e) => e.reason === 'FieldConflict');
    assert.equal(event.type, 'Warning');
    assert.match(event.note ?? '', /shared-api.*limits\.memory.*"someone"/);

    // Reported, not fought over: reconciles while nothing changes send no PATCH.
    const patches = await requests('PATCH');
    // One poke at a time, each followed by a reconcile: pokes sent back to back would fold
    // into fewer reconciles (src/operator/queue.ts: a key is queued once, re-run once if dirty).
    for (let i = 0; i < 3; i++) {
      const reconciled = await successes();
      await core.patchNamespacedService({ name: 'shared-api', namespace: NS, body: { metadata: { annotations: { poke: String(i) } } } }, merge);
      await eventually(async () => ((await successes()) > reconciled ? true : undefined), `a reconcile after poke ${i}`);
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await requests('PATCH')) - patches, 0, 'no apply while the conflict stands');

    // The image is the operator's to own: forced over, it is taken back; the memory stays theirs.
    await theirs({ image: 'theirs:1', resources: { limits: { memory: '2Gi' } } });
    await eventually(async () => ((await container()).image === 'recognition-service:0.1.0' ? true : undefined), 'image taken back');
    assert.equal((await container()).resources?.limits?.memory, '2Gi');
    await eventFor('shared', 'a FieldsReclaimed', (e) => e.reason === 'FieldsReclaimed' && /image \(field manager "someone"\)/.test(e.note ?? ''));
    rs = await getRs('shared');
    assert.equal(condition(rs, 'Degraded')?.reason, 'FieldConflict', 'the memory conflict is still reported');

    // They drop the field from their manifest: the operator's value comes back and the report goes.
    await theirs(undefined);
    await eventually(async () => {
      const r = await getRs('shared');
      return condition(r, 'Degraded')?.status === 'False' ? r : undefined;
    }, 'conflict resolved');
    assert.equal((await container()).resources?.limits?.memory, '1Gi');
    assert.deepEqual(memoryOwners(await getDep('shared-api')), ['recognition-operator']);
    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'shared' });
  });

  // Issue 15, point 8.
  test('leader election through an API outage: kept when shorter than the renew deadline, else stepped down and regained', async () => {
    const target = new URL(cluster.server);
    const sockets = new Set<net.Socket>();
    let down = false;
    const proxy = net.createServer((client) => {
      if (down) return client.destroy();
      const upstream = net.connect(Number(target.port), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const close = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const port = (proxy.address() as net.AddressInfo).port;
    const viaProxy = cluster.kubeConfig();
    viaProxy.clusters[0] = { ...viaProxy.clusters[0], server: `https://127.0.0.1:${port}` };
    const outage = (on: boolean) => {
      down = on;
      if (on) for (const s of sockets) s.destroy();
    };
    let started = 0;
    let stopped = 0;
    const elector = new LeaderElector(viaProxy, {
      namespace: OP_NS, name: 'outage-test', identity: 'survivor', leaseDurationMs: 4_000, renewDeadlineMs: 2_500, retryPeriodMs: 300,
      onStartedLeading: () => started++, onStoppedLeading: () => stopped++,
    });
    elector.start();
    try {
      await eventually(async () => (elector.isLeader ? true : undefined), 'leads');
      outage(true);
      await new Promise((r) => setTimeout(r, 1_200));
      outage(false);
      const back = Date.now();
      // Renewed after the outage (read directly, not through the proxy): only then is it over
      // for the elector, and it must not have stepped down meanwhile.
      await eventually(async () => {
        const spec = (await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'outage-test', namespace: OP_NS })).spec;
        return spec?.holderIdentity === 'survivor' && spec.renewTime && new Date(spec.renewTime).getTime() >= back ? true : undefined;
      }, 'the Lease renewed once the API server is back', 10_000);
      assert.deepEqual([elector.isLeader, started, stopped], [true, 1, 0], 'a short outage keeps the leader');
      outage(true);
      await eventually(async () => (stopped === 1 ? true : undefined), 'steps down past the renew deadline', 10_000);
      assert.equal(elector.isLeader, false);
      outage(false);
      await eventually(async () => (elector.isLeader ? true : undefined), 'leads again once the API server is back', 15_000);
      assert.equal(started, 2);
    } finally {
      outage(false);
      await elector.stop();
      proxy.close();
    }
  });


  test('leader election: no takeover while the holder renews; takeover once its Lease expires', async () => {
    const leases = kc.makeApiClient(CoordinationV1Api);
    const name = 'expiry-test';
    const ghost = async (renew: boolean) => {
      const body = { metadata: { name, namespace: OP_NS }, spec: { holderIdentity: 'crashed-pod', leaseDurationSeconds: 4, renewTime: new V1MicroTime(Date.now()), leaseTransitions: 0 } };
      if (!renew) return leases.createNamespacedLease({ namespace: OP_NS, body });
      const cur = await leases.readNamespacedLease({ name, namespace: OP_NS });
      return leases.replaceNamespacedLease({ name, namespace: OP_NS, body: { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata?.resourceVersion } } });
    };
    await ghost(false);
    let started = 0;
    const elector = new LeaderElector(operatorKc, {
      namespace: OP_NS, name, identity: 'successor', leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 200,
      onStartedLeading: () => started++, onStoppedLeading: () => undefined,
    });
    elector.start();
    try {
      // The holder keeps renewing: the successor waits, however long that lasts.
      for (let i = 0; i < 8; i++) {
        await ghost(true);
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(elector.isLeader, false);
      }
      // The holder dies without releasing: the successor takes over after the lease duration.
      await eventually(async () => (elector.isLeader ? true : undefined), 'takeover after expiry');
      const lease = await leases.readNamespacedLease({ name, namespace: OP_NS });
      assert.equal(lease.spec?.holderIdentity, 'successor');
      assert.equal(lease.spec?.leaseTransitions, 1);
      assert.equal(started, 1);
    } finally {
      await elector.stop();
    }
    assert.equal((await leases.readNamespacedLease({ name, namespace: OP_NS })).spec?.holderIdentity, '', 'released on stop');
  });

  test('invalid resources are refused by the schema (CEL and OpenAPI validation)', async () => {
    const base = () => yamlDocs(path.join(SAMPLES, 'recognitionservice-minimal.yaml'))[0] as Any;
    const refused = async (mutate: (o: Any) => void, message: RegExp) => {
      const o = base();
      o.metadata.name = 'invalid';
      mutate(o);
      await assert.rejects(custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o }), (err: Any) => {
        assert.equal(err.code, 422, String(err.body));
        const status = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
        assert.match(status.message, message);
        return true;
      });
    };
    await refused((o) => (o.spec.api.replicas = { min: 5, max: 2 }), /api.replicas.min must be <= api.replicas.max/);
    await refused((o) => (o.spec.triton.replicas = { min: 3, max: 1 }), /triton.replicas.min must be <= triton.replicas.max/);
    await refused((o) => (o.spec.triton.storageUri = 'http://models.example/repo'), /storageUri must be s3/);
    // The API reads the catalog from s3:// and pvc:// repositories; from gs:// only through a ConfigMap.
    await refused((o) => (o.spec.triton.storageUri = 'gs://models-bucket/repo'), /gs:\/\/ model storage needs api.catalogConfigMapRef/);
    await refused((o) => Object.assign(o.spec.triton, { modelControlMode: 'none', models: ['centernet'] }), /only be listed with modelControlMode explicit/);
    await refused((o) => (o.spec.podDisruptionBudget = { maxUnavailable: 'half' }), /maxUnavailable must be/);
    await refused((o) => delete o.spec.api.image, /image: Required value/);
    await refused((o) => (o.spec.triton.gpus = -1), /gpus/);
    await refused((o) => (o.spec.api.port = o.spec.api.metricsPort = 9000), /must differ/);
    assert.ok(await notFound(custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'invalid' })));
  });

  test('image storage: more than one replica without shared storage is refused; exactly one of s3 or pvc', async () => {
    const base = () => {
      const o = yamlDocs(path.join(SAMPLES, 'recognitionservice-minimal.yaml'))[0] as Any;
      o.metadata.name = 'storage-check';
      return o;
    };
    const refused = async (o: Any, message: RegExp) =>
      assert.rejects(custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o }), (err: Any) => {
        assert.equal(err.code, 422, String(err.body));
        assert.match((typeof err.body === 'string' ? JSON.parse(err.body) : err.body).message, message);
        return true;
      });
    const noStorage = base();
    delete noStorage.spec.api.imageStorage;
    await refused(noStorage, /api.replicas.max > 1 needs storage every replica shares: set api.imageStorage.s3/);
    const both = base();
    both.spec.api.imageStorage = { s3: { bucket: 'vision-images' }, pvc: { claimName: 'shared' } };
    await refused(both, /set exactly one of s3 or pvc/);
    // One replica on its own disk is allowed.
    const single = base();
    delete single.spec.api.imageStorage;
    single.spec.api.replicas = { min: 1, max: 1 };
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: single });
    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'storage-check' });
  });

  test('without imageUrlSecretRef the operator creates one random signing key for every API pod, and keeps it', async () => {
    const o = yamlDocs(path.join(SAMPLES, 'recognitionservice-minimal.yaml'))[0] as Any;
    o.metadata = { name: 'keyless', namespace: NS };
    delete o.spec.api.imageUrlSecretRef;
    o.spec.api.imageStorage = {
      s3: { bucket: 'team-images', prefix: 'keyless/', endpoint: 'http://minio.storage.svc:9000', forcePathStyle: true, credentialsSecretRef: { name: 'images-s3' } },
    };
    o.spec.api.catalogConfigMapRef = { name: 'centernet-v2-catalog' };
    const created = (await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o })) as RecognitionService;
    const secret = await eventually(async () => core.readNamespacedSecret({ name: 'keyless-api-image-url', namespace: NS }).catch(() => undefined), 'signing Secret');
    assert.deepEqual(
      secret.metadata!.ownerReferences!.map((r) => [r.kind, r.name, r.uid]),
      [['RecognitionService', 'keyless', created.metadata.uid]],
    );
    const key = Buffer.from(secret.data!.IMAGE_URL_SECRET, 'base64').toString();
    assert.match(key, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');

    const dep = await eventually(async () => getDep('keyless-api').catch(() => undefined), 'keyless-api Deployment');
    const c = dep.spec!.template.spec!.containers[0];
    const env = (n: string) => c.env?.find((e) => e.name === n);
    assert.deepEqual(plain(env('IMAGE_URL_SECRET')?.valueFrom?.secretKeyRef), { name: 'keyless-api-image-url', key: 'IMAGE_URL_SECRET' });
    assert.equal(env('IMAGE_STORE')?.value, 's3://team-images/keyless');
    assert.equal(env('S3_ENDPOINT')?.value, 'http://minio.storage.svc:9000');
    assert.equal(env('S3_FORCE_PATH_STYLE')?.value, 'true');
    assert.equal(env('IMAGE_RETENTION_DAYS')?.value, '30');
    assert.deepEqual(plain(c.envFrom), [{ secretRef: { name: 'images-s3' } }]);
    // The catalog comes with the model, from a ConfigMap, not from the API image.
    assert.equal(env('MODEL_CATALOG')?.value, '/etc/recognition/catalog/catalog.json');
    assert.deepEqual(plain(c.volumeMounts?.find((m) => m.name === 'catalog')), { name: 'catalog', mountPath: '/etc/recognition/catalog', readOnly: true });
    assert.deepEqual(plain(dep.spec!.template.spec!.volumes?.find((v) => v.name === 'catalog')?.configMap), {
      defaultMode: 420,
      name: 'centernet-v2-catalog',
      items: [{ key: 'catalog.json', path: 'catalog.json' }],
    });
    // Readiness, not liveness or startup, waits for the backends: /healthz answers at once.
    assert.equal(c.startupProbe?.httpGet?.path, '/healthz');
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');

    // Later reconciles never rotate the key (that would break every link handed out).
    await custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'keyless', body: { spec: { api: { logLevel: 'debug' } } } }, merge);
    await eventually(async () => ((await getDep('keyless-api')).spec!.template.spec!.containers[0].env?.some((e) => e.name === 'LOG_LEVEL' && e.value === 'debug') ? true : undefined), 'LOG_LEVEL debug rolled out');
    const again = await core.readNamespacedSecret({ name: 'keyless-api-image-url', namespace: NS });
    assert.equal(Buffer.from(again.data!.IMAGE_URL_SECRET, 'base64').toString(), key);
    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'keyless' });
  });

  test('two operators: one leader; the standby takes over when the leader stops', async () => {
    standby = new RecognitionOperator({ kubeConfig: operatorKc, leaseNamespace: OP_NS, identity: 'operator-b', health: { host: '127.0.0.1', port: 0 }, ...FAST });
    await standby.start();
    const leases = kc.makeApiClient(CoordinationV1Api);
    // Several renew periods later the first still leads and the second waits.
    await eventually(async () => ((await leader!.metrics.reconciles.get()).values.length > 0 ? true : undefined), 'leader active');
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, FAST.leaseTiming.retryPeriodMs));
      assert.equal(leader!.isLeader, true);
      assert.equal(standby.isLeader, false);
    }
    assert.equal((await leases.readNamespacedLease({ name: 'recognition-operator-leader', namespace: OP_NS })).spec?.holderIdentity, 'operator-a');
    const ready = await fetch(`http://127.0.0.1:${standby.healthPort}/readyz`);
    assert.equal(ready.status, 200, 'a synced standby is ready');

    await leader!.stop();
    leader = undefined;
    await eventually(async () => (standby!.isLeader ? true : undefined), 'operator-b takes over');
    const lease = await leases.readNamespacedLease({ name: 'recognition-operator-leader', namespace: OP_NS });
    assert.equal(lease.spec?.holderIdentity, 'operator-b');
    assert.ok((lease.spec?.leaseTransitions ?? 0) >= 1);

    // The new leader does the work: a deleted child comes back.
    await apps.deleteNamespacedDeployment({ name: 'vision-api', namespace: NS });
    await eventually(async () => ((await getDep('vision-api')).metadata?.ownerReferences?.[0]?.name === 'vision' ? true : undefined), 'restored by operator-b');
    const metrics = await eventually(async () => {
      const text = await (await fetch(`http://127.0.0.1:${standby!.healthPort}/metrics`)).text();
      return /controller_runtime_reconcile_total\{controller="recognitionservice",result="success"\} [1-9]/.test(text) ? text : undefined;
    }, 'reconciles counted by operator-b');
    assert.match(metrics, /leader_election_master_status\{name="recognition-operator-leader"\} 1/);
  });

  test('`recog operator` runs against a kubeconfig, serves its probes and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [
      '--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), 'operator',
      '--kubeconfig', cluster.kubeConfigFile(rbacFromChart ? cluster.restricted : cluster.admin),
      '--lease-namespace', OP_NS, '--health-host', '127.0.0.1', '--health-port', String(port),
    ], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, POD_NAME: 'cli-operator', LOG_LEVEL: 'info' } });
    let log = '';
    child.stderr.on('data', (d) => (log += String(d)));
    // 'close', not 'exit': the last stderr lines (operator stopped) may still be unread at 'exit'.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      await eventually(async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined), 'CLI operator ready');
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(metrics, /leader_election_master_status\{name="recognition-operator-leader"\} 0/, 'a standby while operator-b leads');
      assert.match(metrics, /recognition_operator_process_cpu_seconds_total/, 'process metrics on its own registry');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, log);
    assert.match(log, /operator stopped/);
  });

  test('an operator whose caches cannot list is live but not ready', async () => {
    const denied = new RecognitionOperator({
      kubeConfig: cluster.kubeConfig({ name: 'nobody', token: 'not-a-valid-token' }),
      leaseNamespace: OP_NS, identity: 'denied', health: { host: '127.0.0.1', port: 0 }, ...FAST,
    });
    await denied.start();
    try {
      assert.equal((await fetch(`http://127.0.0.1:${denied.healthPort}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${denied.healthPort}/readyz`)).status, 503);
      assert.equal(denied.isLeader, false);
    } finally {
      await denied.stop();
    }
  });

  test('server-side dry-run of every sample and of the rendered charts', async () => {
    const docs: Array<{ from: string; obj: Any }> = [];
    for (const f of fs.readdirSync(SAMPLES).filter((f) => f.endsWith('.yaml'))) {
      for (const obj of yamlDocs(path.join(SAMPLES, f))) docs.push({ from: `crds/samples/${f}`, obj });
    }
    if (tools!.helm) {
      for (const chart of ['recognition-operator', 'recognition-service-sample']) {
        const out = execFileSync(tools!.helm, ['template', 'rec', path.join(ROOT, 'charts', chart), '--namespace', NS, '--include-crds'], { encoding: 'utf8' });
        for (const obj of parseYaml(out).filter(Boolean)) docs.push({ from: `charts/${chart}`, obj });
      }
    }
    assert.ok(docs.length >= 5);
    if (tools!.kubectl) {
      // kubectl apply --dry-run=server, as an SRE would.
      const file = path.join(cluster.dir, 'all.yaml');
      fs.writeFileSync(file, docs.map((d) => JSON.stringify({ ...d.obj, metadata: { ...d.obj.metadata, namespace: d.obj.kind === 'CustomResourceDefinition' || d.obj.kind?.startsWith('Cluster') ? undefined : NS } })).join('\n---\n'));
      const out = execFileSync(tools!.kubectl, ['--kubeconfig', cluster.kubeConfigFile(), 'apply', '--dry-run=server', '--server-side', '--force-conflicts', '-f', file], { encoding: 'utf8' });
      assert.equal(out.trim().split('\n').length, docs.length, out);
      assert.ok(out.split('\n').filter(Boolean).every((l) => l.includes('(server dry run)')), out);
    } else {
      for (const { from, obj } of docs) {
        const o = { ...obj, metadata: { ...obj.metadata, namespace: obj.kind === 'CustomResourceDefinition' || obj.kind.startsWith('Cluster') ? undefined : NS } };
        await assert.doesNotReject(objects.patch(toClientModel(o), undefined, 'All', 'dry-run-test', true, PatchStrategy.ServerSideApply), `${from}: ${obj.kind} ${obj.metadata.name}`);
      }
    }
  });
});
