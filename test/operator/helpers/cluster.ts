/**
 * A real, private Kubernetes control plane for tests: etcd + kube-apiserver on free
 * loopback ports in a temp dir (no kubelet, scheduler or controllers: tests play their
 * part by writing Deployment and Pod status). Tools come from scripts/k8s-tools.sh.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiextensionsV1Api, KubeConfig, RbacAuthorizationV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { toClientModel } from '../../../src/operator/kube.js';
import { RecognitionOperator, type OperatorOptions } from '../../../src/operator/operator.js';
import { eventually as poll } from '../../helpers/eventually.js';
import { REPO_ROOT } from '../../helpers/fixtures.js';
import { freePort } from '../../helpers/local-server.js';

export interface K8sTools {
  etcd: string;
  kubeApiserver: string;
  kubectl?: string;
  helm?: string;
  /** For the cluster e2e suite (scripts/k8s-tools.sh builds them too). */
  kubeControllerManager?: string;
  kubeScheduler?: string;
  kwok?: string;
}

export function toolsDir(): string {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return process.env.K8S_TOOLS_BIN ?? path.join(cache, 'recognition-service', 'bin');
}

function executable(p: string | undefined): string | undefined {
  if (!p) return undefined;
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return p;
  } catch {
    return undefined;
  }
}

/** The tools, or undefined with the reason when scripts/k8s-tools.sh has not been run. */
export function findTools(): { tools?: K8sTools; missing: string } {
  const dir = toolsDir();
  const etcd = executable(path.join(dir, 'etcd')) ?? executable('/usr/bin/etcd');
  const kubeApiserver = executable(path.join(dir, 'kube-apiserver'));
  const kubectl = executable(path.join(dir, 'kubectl'));
  const helm = executable(path.join(dir, 'helm'));
  const missing = [!etcd && 'etcd', !kubeApiserver && 'kube-apiserver'].filter(Boolean).join(', ');
  if (missing) {
    const message = `${missing} not installed in ${dir}: run scripts/k8s-tools.sh install`;
    // CI installs them: there, a missing tool is a failure, not a reason to skip.
    if (process.env.CI === 'true') throw new Error(message);
    return { missing: message };
  }
  return {
    tools: {
      etcd: etcd!,
      kubeApiserver: kubeApiserver!,
      kubectl,
      helm,
      kubeControllerManager: executable(path.join(dir, 'kube-controller-manager')),
      kubeScheduler: executable(path.join(dir, 'kube-scheduler')),
      kwok: executable(path.join(dir, 'kwok')),
    },
    missing: '',
  };
}

/** The whole simulated cluster's tools, or the reason they are missing (a failure under CI=true). */
export function findClusterTools(): { tools?: Required<Pick<K8sTools, 'kubeControllerManager' | 'kubeScheduler' | 'kwok'>> & K8sTools; missing: string } {
  const { tools, missing } = findTools();
  if (!tools) return { missing };
  const absent = [!tools.kubeControllerManager && 'kube-controller-manager', !tools.kubeScheduler && 'kube-scheduler', !tools.kwok && 'kwok'].filter(Boolean).join(', ');
  if (absent) {
    const message = `${absent} not installed in ${toolsDir()}: run scripts/k8s-tools.sh install`;
    if (process.env.CI === 'true') throw new Error(message);
    return { missing: message };
  }
  return { tools: tools as never, missing: '' };
}

export function findHelm(): string | undefined {
  const helm = executable(path.join(toolsDir(), 'helm'));
  if (!helm && process.env.CI === 'true') throw new Error(`helm not installed in ${toolsDir()}: run scripts/k8s-tools.sh install`);
  return helm;
}

export { freePort };

function httpsGet(url: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

export interface TestUser {
  name: string;
  token: string;
}

export interface TestCluster {
  server: string;
  dir: string;
  /** The service-account signing key (kube-controller-manager's tokens controller). */
  saKeyFile: string;
  admin: TestUser;
  /** A user with no rights until the test binds a role to it (RBAC tests). */
  restricted: TestUser;
  kubeConfig(user?: TestUser): KubeConfig;
  /** Writes a kubeconfig file for kubectl/helm and returns its path. */
  kubeConfigFile(user?: TestUser): string;
  stop(): Promise<void>;
}

export function startProcess(cmd: string, args: string[], logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return child;
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!killed) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** A child of the control plane could not bind a port freePort() had found free. */
class PortTakenError extends Error {}

/**
 * etcd and kube-apiserver on loopback. Their ports come from freePort() and are bound later,
 * by the children: another process (a test's own server on port 0) can take one in between.
 * Such a start is tried again on new ports; any other failure is thrown.
 */
export async function startCluster(tools: K8sTools): Promise<TestCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(tools);
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 3) throw err;
    }
  }
}

async function startClusterOnce(tools: K8sTools): Promise<TestCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recog-k8s-'));
  const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcd = startProcess(tools.etcd, [
    '--name=test',
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
    `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=test=http://127.0.0.1:${etcdPeer}`,
    '--log-level=warn',
  ], path.join(dir, 'etcd.log'));

  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  const admin = { name: 'test-admin', token: crypto.randomBytes(24).toString('hex') };
  const restricted = { name: 'recognition-operator-test', token: crypto.randomBytes(24).toString('hex') };
  fs.writeFileSync(
    path.join(dir, 'tokens.csv'),
    `${admin.token},${admin.name},uid-admin,"system:masters"\n${restricted.token},${restricted.name},uid-operator\n`,
    { mode: 0o600 },
  );

  const apiserver = startProcess(tools.kubeApiserver, [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${path.join(dir, 'certs')}`,
    `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
    '--service-cluster-ip-range=10.96.0.0/24',
    // No controller manager creates the default ServiceAccount: test pods run without one.
    '--disable-admission-plugins=ServiceAccount',
    '--endpoint-reconciler-type=none',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=0',
  ], path.join(dir, 'kube-apiserver.log'));

  const server = `https://127.0.0.1:${apiPort}`;
  const stop = async () => {
    await stopProcess(apiserver);
    await stopProcess(etcd);
    if (!process.env.KEEP_TEST_CLUSTER) fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (apiserver.exitCode !== null || etcd.exitCode !== null) {
      const logs = ['etcd.log', 'kube-apiserver.log'].map((f) => fs.readFileSync(path.join(dir, f), 'utf8').slice(-3000));
      await stop();
      const message = `control plane exited early:\n${logs.join('\n')}`;
      throw /address already in use/.test(message) ? new PortTakenError(message) : new Error(message);
    }
    if ((await httpsGet(`${server}/readyz`, admin.token)) === 200) break;
    if (Date.now() > deadline) {
      const log = fs.readFileSync(path.join(dir, 'kube-apiserver.log'), 'utf8').slice(-3000);
      await stop();
      throw new Error(`kube-apiserver not ready after 120 s:\n${log}`);
    }
    await sleep(250);
  }

  const kubeConfig = (user: TestUser = admin) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'test', server, skipTLSVerify: true }],
      users: [{ name: user.name, token: user.token }],
      contexts: [{ name: 'test', cluster: 'test', user: user.name, namespace: 'default' }],
      currentContext: 'test',
    });
    return kc;
  };
  const kubeConfigFile = (user: TestUser = admin) => {
    const file = path.join(dir, `kubeconfig-${user.name}`);
    fs.writeFileSync(file, kubeConfig(user).exportConfig(), { mode: 0o600 });
    return file;
  };
  return { server, dir, saKeyFile: path.join(dir, 'sa.key'), admin, restricted, kubeConfig, kubeConfigFile, stop };
}

/** The suite's one polling helper (test/helpers/eventually.ts) under this file's signature. */
export function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  return poll(fn, { what, timeoutMs, intervalMs: 200 });
}

/**
 * The rest of a cluster on top of startCluster(): the real kube-controller-manager (Deployment,
 * ReplicaSet, HPA, garbage collector...) and kube-scheduler, and kwok playing the kubelets of
 * fake nodes with the stages in test/operator/e2e/kwok-stages.yaml. Each on free loopback
 * ports, logging into the cluster's temp dir.
 */
export async function startControllers(
  cluster: TestCluster,
  tools: Required<Pick<K8sTools, 'kubeControllerManager' | 'kubeScheduler' | 'kwok'>>,
  stagesFile: string,
): Promise<{ stop(): Promise<void> }> {
  const kubeconfig = cluster.kubeConfigFile();
  const [kcmPort, schedPort, kwokPort] = [await freePort(), await freePort(), await freePort()];
  const kcm = startProcess(tools.kubeControllerManager, [
    `--kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${kcmPort}`,
    '--leader-elect=false',
    `--service-account-private-key-file=${cluster.saKeyFile}`,
    '--use-service-account-credentials=false',
    // No kubelets renew node Leases the way the node lifecycle controller expects: keep it off.
    '--controllers=*,-node-lifecycle-controller,-service-lb-controller,-node-route-controller,-cloud-node-lifecycle-controller',
    '--horizontal-pod-autoscaler-sync-period=2s',
    '--horizontal-pod-autoscaler-downscale-stabilization=5s',
    '--concurrent-deployment-syncs=10',
    '--concurrent-replicaset-syncs=10',
    // Its client's default 20 requests/s made pod creation the bottleneck at scale (a pod
    // create, a ReplicaSet status and an event each: about 8 pods/s for 50 resources).
    '--kube-api-qps=200',
    '--kube-api-burst=400',
    '--v=1',
  ], path.join(cluster.dir, 'kube-controller-manager.log'));
  const scheduler = startProcess(tools.kubeScheduler, [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${schedPort}`,
    '--leader-elect=false',
    '--v=1',
  ], path.join(cluster.dir, 'kube-scheduler.log'));
  const kwok = startProcess(tools.kwok, [
    `--kubeconfig=${kubeconfig}`,
    `--config=${stagesFile}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--cidr=10.244.0.1/16',
    '--node-ip=10.0.0.1',
    `--server-address=127.0.0.1:${kwokPort}`,
    '--v=INFO',
  ], path.join(cluster.dir, 'kwok.log'));
  const procs = [kcm, scheduler, kwok];
  await sleep(500);
  for (const [p, name] of [[kcm, 'kube-controller-manager'], [scheduler, 'kube-scheduler'], [kwok, 'kwok']] as const) {
    if (p.exitCode !== null) {
      const log = fs.readFileSync(path.join(cluster.dir, `${name}.log`), 'utf8').slice(-3000);
      await Promise.all(procs.map(stopProcess));
      throw new Error(`${name} exited at start:\n${log}`);
    }
  }
  return { stop: async () => void (await Promise.all(procs.map(stopProcess))) };
}

/** A fake node kwok manages, with the given capacity (add 'nvidia.com/gpu' for a GPU node). */
export function fakeNode(name: string, capacity: Record<string, string>, labels: Record<string, string> = {}, taints: Array<Record<string, string>> = []) {
  const full = { cpu: '32', memory: '128Gi', pods: '110', ...capacity };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, annotations: { 'kwok.x-k8s.io/node': 'fake' }, labels: { 'kubernetes.io/hostname': name, type: 'kwok', ...labels } },
    spec: { taints },
    status: { capacity: full, allocatable: full },
  };
}

/**
 * Creates fake nodes, waits until kwok reports them Ready, then sets their taints: the API
 * server's TaintNodesByCondition admission adds node.kubernetes.io/not-ready at creation, and
 * the node lifecycle controller that would lift it is off (no kubelet renews node Leases).
 */
export async function addFakeNodes(kc: KubeConfig, nodes: Array<ReturnType<typeof fakeNode>>): Promise<void> {
  const { CoreV1Api, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  for (const n of nodes) await core.createNode({ body: n as never });
  await eventually(async () => {
    const all = (await core.listNode()).items;
    const ready = all.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length >= nodes.length ? true : undefined;
  }, `${nodes.length} fake nodes Ready (kwok)`, 120_000);
  for (const n of nodes) {
    await core.patchNode({ name: n.metadata.name, body: { spec: { taints: n.spec.taints } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }
}

/** A minimal stand-in for Prometheus Operator's ServiceMonitor CRD: ServiceMonitors are children of a RecognitionService too. */
export const SERVICE_MONITOR_CRD: KubernetesObject = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'servicemonitors.monitoring.coreos.com' },
  spec: {
    group: 'monitoring.coreos.com', scope: 'Namespaced',
    names: { kind: 'ServiceMonitor', plural: 'servicemonitors', singular: 'servicemonitor', listKind: 'ServiceMonitorList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
} as KubernetesObject;

/**
 * Creates the RecognitionService CRD from crds/ (and any `extra` CRDs) and waits until each is
 * Established: until then the API server refuses the resources, and informers fail to list.
 */
export async function installCrds(kc: KubeConfig, extra: KubernetesObject[] = []): Promise<void> {
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const text = fs.readFileSync(path.join(REPO_ROOT, 'crds/cv.recognition.io_recognitionservices.yaml'), 'utf8');
  const crds = parseAllDocuments(text).map((d) => d.toJS() as KubernetesObject).filter(Boolean);
  for (const crd of [...crds, ...extra]) {
    const name = crd.metadata!.name!;
    await ext.createCustomResourceDefinition({ body: toClientModel(crd) });
    await eventually(async () => {
      const got = await ext.readCustomResourceDefinition({ name });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    }, `CRD ${name} established`);
  }
}

/**
 * Applies exactly the RBAC of charts/recognition-operator as `helm template` renders it for
 * `namespace`, its bindings granting the cluster's restricted user instead of the ServiceAccount,
 * and returns that user's kubeconfig: an operator run with it has the chart's rights and no more,
 * so a missing permission fails the test.
 */
export async function applyChartRbac(cluster: TestCluster, helm: string, namespace: string): Promise<KubeConfig> {
  const rbac = cluster.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  const out = execFileSync(helm, ['template', 'rec', path.join(REPO_ROOT, 'charts/recognition-operator'), '--namespace', namespace], { encoding: 'utf8' });
  type Doc = KubernetesObject & { kind: string; subjects?: unknown[] };
  for (const doc of parseAllDocuments(out).map((d) => d.toJS() as Doc).filter(Boolean)) {
    if (doc.subjects) doc.subjects = [{ kind: 'User', name: cluster.restricted.name, apiGroup: 'rbac.authorization.k8s.io' }];
    const body = toClientModel<never>(doc);
    if (doc.kind === 'ClusterRole') await rbac.createClusterRole({ body });
    if (doc.kind === 'ClusterRoleBinding') await rbac.createClusterRoleBinding({ body });
    if (doc.kind === 'Role') await rbac.createNamespacedRole({ namespace, body });
    if (doc.kind === 'RoleBinding') await rbac.createNamespacedRoleBinding({ namespace, body });
  }
  return cluster.kubeConfig(cluster.restricted);
}

/**
 * Lease and retry timings for tests: a standby takes over within seconds, a failed reconcile
 * is retried within five, and the cluster's API groups are read afresh on every reconcile
 * (tests add CRDs as they go).
 */
export const TEST_OPERATOR_TIMING = {
  leaseTiming: { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 400 },
  backoff: { baseDelayMs: 200, maxDelayMs: 5_000 },
  capabilitiesTtlMs: 0,
} satisfies Partial<OperatorOptions>;

/** An operator with TEST_OPERATOR_TIMING; `options` add to or override it. Not started. */
export function testOperator(kubeConfig: KubeConfig, options: Omit<OperatorOptions, 'kubeConfig'>): RecognitionOperator {
  return new RecognitionOperator({ kubeConfig, ...TEST_OPERATOR_TIMING, ...options });
}
