/**
 * `npm run bench -- operator`: 50 RecognitionServices on 80 kwok nodes (50 with 2 GPUs),
 * with the real kube-apiserver, kube-controller-manager and kube-scheduler (built by
 * scripts/k8s-tools.sh). Reports the time until every resource is Ready, API writes per
 * reconcile in a steady state (the goal is zero), and the operator process's memory; then,
 * as the raw limit in the same run, the time for the same children created directly (no
 * operator) in another namespace to have every Deployment ready: what the API server,
 * the controllers, the scheduler and kwok take on their own. BENCH_RESOURCES sets N.
 */
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { desiredState } from '../src/operator/desired/index.js';
import { RecognitionOperator } from '../src/operator/operator.js';
import { toClientModel } from '../src/operator/kube.js';
import type { RecognitionService } from '../src/operator/api/types.js';
import { addFakeNodes, eventually, fakeNode, findClusterTools, startCluster, startControllers } from '../test/operator/helpers/cluster.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const RESOURCES = Number(process.env.BENCH_RESOURCES ?? 50);
// Two GPUs a node, enough for both runs' Triton pods (N each).
const GPU_NODES = Math.max(30, RESOURCES);
const CPU_NODES = 30;
const STEADY_MS = 30_000;

const yamlDocs = (file: string): any[] => parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);

export async function run(): Promise<void> {
  const { tools, missing } = findClusterTools();
  if (!tools) {
    console.log(`skipped: ${missing}`);
    return;
  }
  const cluster = await startCluster(tools);
  const controllers = await startControllers(cluster, tools, path.join(ROOT, 'test/operator/e2e/kwok-stages.yaml'));
  let operator: RecognitionOperator | undefined;
  try {
    const kc = cluster.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of yamlDocs(path.join(ROOT, 'crds/cv.recognition.io_recognitionservices.yaml'))) {
      await ext.createCustomResourceDefinition({ body: toClientModel(crd as KubernetesObject) });
    }
    await core.createNamespace({ body: { metadata: { name: 'bench' } } });
    const taint = [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }];
    await addFakeNodes(kc, [
      ...Array.from({ length: GPU_NODES }, (_, i) => fakeNode(`gpu-${i}`, { 'nvidia.com/gpu': '2' }, { 'nvidia.com/gpu.present': 'true' }, taint)),
      ...Array.from({ length: CPU_NODES }, (_, i) => fakeNode(`cpu-${i}`, {})),
    ]);
    await eventually(async () => ((await custom.listClusterCustomObject(GROUP)) ? true : undefined), 'CRD served');

    const rssBefore = process.memoryUsage().rss;
    operator = new RecognitionOperator({ kubeConfig: kc, leaseNamespace: 'bench', identity: 'bench', resyncPeriodMs: 10_000, workers: 2, events: true });
    await operator.start();
    await eventually(async () => (operator!.isLeader ? true : undefined), 'leader');

    const sample = yamlDocs(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'))[0];
    const t0 = Date.now();
    for (let i = 0; i < RESOURCES; i++) {
      const body = structuredClone(sample);
      body.metadata = { name: `rs-${i}`, namespace: 'bench' };
      body.spec.autoscaling = { enabled: false };
      body.spec.api.replicas = { min: 2, max: 2 };
      body.spec.triton.replicas = { min: 1, max: 1 };
      await custom.createNamespacedCustomObject({ ...GROUP, namespace: 'bench', body });
    }
    await eventually(
      async () => {
        const list = (await custom.listNamespacedCustomObject({ ...GROUP, namespace: 'bench' })) as { items: RecognitionService[] };
        const ready = list.items.filter((r) => r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
        return ready === RESOURCES ? true : undefined;
      },
      'all Ready',
      600_000,
    );
    const toReady = (Date.now() - t0) / 1000;

    // Steady state: resyncs every 10 s reconcile every resource; nothing changed, so nothing is written.
    await new Promise((r) => setTimeout(r, 5_000));
    const sum = async (metric: 'requests' | 'reconciles', pred: (l: Record<string, string | number>) => boolean) =>
      (await operator!.metrics[metric].get()).values.filter((v) => pred(v.labels)).reduce((n, v) => n + v.value, 0);
    const writes = () => sum('requests', (l) => ['PATCH', 'PUT', 'POST', 'DELETE'].includes(String(l.method)));
    const leaseWrites = () => sum('requests', (l) => l.method === 'PUT');
    const reconciles = () => sum('reconciles', () => true);
    const [w0, l0, r0] = [await writes(), await leaseWrites(), await reconciles()];
    await new Promise((r) => setTimeout(r, STEADY_MS));
    const [w1, l1, r1] = [await writes(), await leaseWrites(), await reconciles()];
    const n = r1 - r0;
    const objectWrites = w1 - w0 - (l1 - l0);
    const rss = process.memoryUsage().rss;
    const rawSeconds = await rawChildren(kc, core, sample);
    console.log(`resources ${RESOURCES}, nodes ${GPU_NODES + CPU_NODES} (${GPU_NODES} with 2 GPUs), pods ${RESOURCES * 3}`);
    console.log(`time to all Ready: ${toReady.toFixed(1)} s`);
    console.log(`steady state over ${STEADY_MS / 1000} s: ${n} reconciles, ${objectWrites} writes besides Lease renewals (${n ? (objectWrites / n).toFixed(3) : '-'} per reconcile)`);
    console.log(`raw limit: the same ${RESOURCES} sets of children created directly, every Deployment ready: ${rawSeconds.toFixed(1)} s (operator/raw ${(toReady / rawSeconds).toFixed(2)})`);
    console.log(`memory: heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB, process RSS ${(rss / 2 ** 20).toFixed(0)} MiB (+${((rss - rssBefore) / 2 ** 20).toFixed(0)} MiB since the operator started; the bench's own client shares the process)`);
  } finally {
    await operator?.stop();
    await controllers.stop();
    await cluster.stop();
  }
}

/** The children the operator would make for N resources, created directly; seconds until every Deployment is ready. */
async function rawChildren(kc: KubeConfig, core: CoreV1Api, sample: RecognitionService): Promise<number> {
  await core.createNamespace({ body: { metadata: { name: 'bench-raw' } } });
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const apps = kc.makeApiClient(AppsV1Api);
  const t0 = Date.now();
  // All resources at once (each one's children in order): a bound the operator, with its
  // two workers, cannot beat.
  await Promise.all(
    Array.from({ length: RESOURCES }, async (_, i) => {
      const rs = structuredClone(sample);
      rs.metadata = { name: `rs-${i}`, namespace: 'bench-raw', uid: `raw-${i}` };
      rs.spec.autoscaling = { enabled: false };
      rs.spec.api.replicas = { min: 2, max: 2 };
      rs.spec.triton.replicas = { min: 1, max: 1 };
      for (const child of desiredState(rs, { serviceMonitor: false }).apply) {
        // No owner: the resource does not exist, and the garbage collector would delete its children.
        delete child.metadata.ownerReferences;
        await objects.create(toClientModel(child));
      }
    }),
  );
  await eventually(
    async () => {
      const list = await apps.listNamespacedDeployment({ namespace: 'bench-raw' });
      const ready = list.items.filter((d) => (d.status?.readyReplicas ?? 0) === d.spec?.replicas).length;
      return ready === RESOURCES * 2 ? true : undefined;
    },
    'raw Deployments ready',
    600_000,
  );
  return (Date.now() - t0) / 1000;
}
