/**
 * The metrics APIs the HPA controller reads, served to a test cluster through the real
 * kube-apiserver's aggregation layer: `metrics.k8s.io/v1beta1` (pods' CPU and memory, what
 * metrics-server gives) and `custom.metrics.k8s.io/v1beta2` (per-pod custom metrics, what a
 * Prometheus adapter gives). The values come from the test, per pod, so a test decides the
 * load the autoscaler sees. Each APIService points at an ExternalName Service naming
 * 127.0.0.1, which the aggregator dials directly: no cluster network needed. The server
 * reuses the certificate kube-apiserver generated for itself (the APIService skips
 * verification, as a test cluster may).
 */
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApiregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { eventually, type TestCluster } from './cluster.js';

/** A pod's usage: CPU and memory as Kubernetes quantities, and custom metric values by name. */
export interface PodLoad {
  cpu?: string;
  memory?: string;
  custom?: Record<string, string>;
}

export interface FakeMetricsApi {
  /**
   * Sets what each pod reports from now on; a pod given undefined reports nothing. `running`
   * is how many running pods the query selects (the component's), so a test can spread a
   * fixed total load over however many pods serve it, as real traffic spreads.
   */
  setLoad(fn: (pod: V1Pod, running: number) => PodLoad | undefined): void;
  /** Requests served, by path without the query. */
  requests: string[];
  stop(): Promise<void>;
}

const RESOURCE = { group: 'metrics.k8s.io', version: 'v1beta1' };
const CUSTOM = { group: 'custom.metrics.k8s.io', version: 'v1beta2' };
const NAMESPACE = 'kube-system';
const SERVICE = 'fake-metrics';

export async function startFakeMetricsApi(cluster: TestCluster, customMetrics: string[]): Promise<FakeMetricsApi> {
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  let load: (pod: V1Pod, running: number) => PodLoad | undefined = () => undefined;
  const requests: string[] = [];

  const runningPods = async (namespace: string, labelSelector?: string) =>
    (await core.listNamespacedPod({ namespace, labelSelector })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);

  const resourceList = (gv: { group: string; version: string }, resources: Array<{ name: string; kind: string; verbs: string[] }>) => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: `${gv.group}/${gv.version}`,
    resources: resources.map((r) => ({ ...r, singularName: '', namespaced: true })),
  });

  async function answer(url: URL): Promise<unknown> {
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent); // the HPA asks for pods/%2A/<metric>
    const now = new Date().toISOString();
    if (url.pathname === '/apis') {
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [RESOURCE, CUSTOM].map((gv) => {
          const v = { groupVersion: `${gv.group}/${gv.version}`, version: gv.version };
          return { name: gv.group, versions: [v], preferredVersion: v };
        }),
      };
    }
    if (url.pathname === `/apis/${RESOURCE.group}/${RESOURCE.version}`) {
      return resourceList(RESOURCE, [{ name: 'pods', kind: 'PodMetrics', verbs: ['get', 'list'] }]);
    }
    if (url.pathname === `/apis/${CUSTOM.group}/${CUSTOM.version}`) {
      return resourceList(CUSTOM, customMetrics.map((m) => ({ name: `pods/${m}`, kind: 'MetricValueList', verbs: ['get'] })));
    }
    // /apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods
    if (parts.length === 6 && `${parts[1]}/${parts[2]}` === `${RESOURCE.group}/${RESOURCE.version}` && parts[3] === 'namespaces' && parts[5] === 'pods') {
      const items = [];
      const pods = await runningPods(parts[4], url.searchParams.get('labelSelector') ?? undefined);
      for (const pod of pods) {
        const l = load(pod, pods.length);
        if (!l?.cpu) continue;
        items.push({
          metadata: { name: pod.metadata!.name, namespace: pod.metadata!.namespace, labels: pod.metadata!.labels, creationTimestamp: now },
          // A window of 1 s: the HPA counts a pod's CPU once the sample is younger than
          // its Ready transition plus the window, so a fresh pod counts a second later.
          timestamp: now,
          window: '1s',
          containers: (pod.spec?.containers ?? []).map((c, i) => ({
            name: c.name,
            usage: { cpu: i === 0 ? l.cpu : '0', memory: i === 0 ? (l.memory ?? '100Mi') : '0' },
          })),
        });
      }
      return { kind: 'PodMetricsList', apiVersion: `${RESOURCE.group}/${RESOURCE.version}`, metadata: {}, items };
    }
    // /apis/custom.metrics.k8s.io/v1beta2/namespaces/{ns}/pods/*/{metric}
    if (parts.length === 8 && `${parts[1]}/${parts[2]}` === `${CUSTOM.group}/${CUSTOM.version}` && parts[3] === 'namespaces' && parts[5] === 'pods') {
      const [namespace, name, metric] = [parts[4], parts[6], parts[7]];
      const items = [];
      const pods = await runningPods(namespace, url.searchParams.get('labelSelector') ?? undefined);
      for (const pod of pods) {
        if (name !== '*' && pod.metadata!.name !== name) continue;
        const value = load(pod, pods.length)?.custom?.[metric];
        if (value === undefined) continue;
        items.push({
          describedObject: { kind: 'Pod', namespace, name: pod.metadata!.name, apiVersion: '/v1' },
          metric: { name: metric },
          timestamp: now,
          windowSeconds: 60,
          value,
        });
      }
      return { kind: 'MetricValueList', apiVersion: `${CUSTOM.group}/${CUSTOM.version}`, metadata: {}, items };
    }
    return undefined;
  }

  const certDir = path.join(cluster.dir, 'certs');
  const server = https.createServer({ cert: fs.readFileSync(path.join(certDir, 'apiserver.crt')), key: fs.readFileSync(path.join(certDir, 'apiserver.key')) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://fake-metrics');
    requests.push(url.pathname);
    answer(url).then(
      (body) => {
        res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: String(err), code: 500 }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  await core.createNamespacedService({
    namespace: NAMESPACE,
    body: { metadata: { name: SERVICE }, spec: { type: 'ExternalName', externalName: '127.0.0.1' } },
  });
  const registration = kc.makeApiClient(ApiregistrationV1Api);
  for (const gv of [RESOURCE, CUSTOM]) {
    await registration.createAPIService({
      body: {
        metadata: { name: `${gv.version}.${gv.group}` },
        spec: {
          group: gv.group,
          version: gv.version,
          service: { namespace: NAMESPACE, name: SERVICE, port },
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    });
  }
  await eventually(async () => {
    for (const gv of [RESOURCE, CUSTOM]) {
      const s = await registration.readAPIService({ name: `${gv.version}.${gv.group}` });
      if (!s.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')) return undefined;
    }
    return true;
  }, 'fake metrics APIServices Available');

  return {
    setLoad: (fn) => {
      load = fn;
    },
    requests,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
