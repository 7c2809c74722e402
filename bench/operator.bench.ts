/**
 * `npm run bench -- operator [--resources 10,50] [--workers 2] [--steady 30] [--cpu-prof DIR]`:
 * N RecognitionServices (2 API pods and 1 Triton pod each, autoscaling off) on 60 kwok nodes
 * (30 with 2 GPUs; more past N=50), with the real kube-apiserver, kube-controller-manager and
 * kube-scheduler (scripts/k8s-tools.sh); a fresh cluster for each N. The operator runs as its
 * own process (`recog operator`), so its CPU time and memory are its own. For each N:
 * - limit 1, the bare kube-apiserver (no controllers yet) accepting plain creates of the same
 *   children, N resources' worth, with as many callers as the operator has workers;
 * - limit 2, the cluster alone: those children created directly with the controllers running,
 *   until every Deployment is available (what the operator cannot beat);
 * - the time to all Ready, split into when the operator had created every Deployment, when
 *   every pod was Ready (controllers, scheduler, kwok) and when every status said Ready;
 * - reconciles/s, API requests per reconcile, worker occupancy, CPU time of the operator and
 *   of each control-plane process, the operator's memory, the API server's request count;
 * - a steady state (a resync every 10 s): writes per reconcile, the goal being zero.
 * BENCH_RESOURCES=50 still works in place of --resources.
 */
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { ReusingKubeConfig } from '../src/operator/connections.js';
import { toClientModel } from '../src/operator/kube.js';
import { desiredState } from '../src/operator/desired/index.js';
import { signingSecret } from '../src/operator/desired/api.js';
import { withDefaults } from '../src/operator/api/defaults.js';
import type { RecognitionService } from '../src/operator/api/types.js';
import {
  addFakeNodes,
  eventually,
  fakeNode,
  findClusterTools,
  freePort,
  startCluster,
  startControllers,
  stopProcess,
  type TestCluster,
} from '../test/operator/helpers/cluster.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
/** 30 GPU nodes (2 GPUs each) and 30 CPU nodes, more past 50 resources (one GPU per Triton pod). */
const nodesFor = (n: number) => Math.max(30, Math.ceil(n / 2) + 5);
const READY_TIMEOUT_MS = 600_000;
const POLL_MS = 1_000;
const CLK_TCK = 100; // /proc/<pid>/stat counts CPU time in ticks of 1/100 s on Linux

const yamlDocs = (file: string): any[] => parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS()).filter(Boolean);

function options(): { resources: number[]; workers: number; steadyMs: number; cpuProf?: string } {
  const { values } = parseArgs({
    args: process.argv.slice(3),
    options: { resources: { type: 'string' }, workers: { type: 'string' }, steady: { type: 'string' }, 'cpu-prof': { type: 'string' } },
  });
  const resources = (values.resources ?? process.env.BENCH_RESOURCES ?? '50').split(',').map(Number);
  if (resources.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--resources: expected positive integers, got ${values.resources}`);
  const workers = Number(values.workers ?? 2);
  const steadyMs = 1000 * Number(values.steady ?? 30);
  if (!Number.isInteger(workers) || workers < 1 || !(steadyMs >= 0)) throw new Error('--workers: a positive integer; --steady: seconds');
  return { resources, workers, steadyMs, cpuProf: values['cpu-prof'] && path.resolve(values['cpu-prof']) };
}

/** The N resources the bench creates: the minimal sample, autoscaling off, 2 API pods and 1 Triton pod each. */
function resources(n: number): RecognitionService[] {
  const sample = yamlDocs(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'))[0];
  return Array.from({ length: n }, (_, i) => {
    const body = structuredClone(sample);
    body.metadata = { name: `rs-${i}`, namespace: 'bench' };
    body.spec.autoscaling = { enabled: false };
    body.spec.api.replicas = { min: 2, max: 2 };
    body.spec.triton.replicas = { min: 1, max: 1 };
    return body as RecognitionService;
  });
}

/** Runs fn over items with this many callers at once. */
async function pool<T>(items: T[], callers: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: callers }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

function get(url: string, token?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
  });
}

/** Sum of a Prometheus counter's samples whose labels pass the filter. */
function promSum(text: string, name: string, labels: (l: string) => boolean = () => true): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const brace = line.indexOf('}');
    const l = brace > 0 ? line.slice(name.length + 1, brace) : '';
    if (labels(l)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

interface ProcStats {
  cpuS: number;
  rssMiB: number;
  peakRssMiB: number;
}

function procStats(pid: number): ProcStats {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuS = (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime, stime
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { cpuS, rssMiB: kb('VmRSS') / 1024, peakRssMiB: kb('VmHWM') / 1024 };
}

/** The children N resources need (signing Secret included), owned by nothing, in `namespace`. */
function childrenOf(list: RecognitionService[], namespace: string): KubernetesObject[][] {
  return list.map((r, i) => {
    const rs = { ...structuredClone(r), metadata: { name: `${namespace}-${i}`, namespace, uid: `${namespace}-${i}` } } as RecognitionService;
    const secret = signingSecret(withDefaults(rs), namespace);
    const children = [...(secret ? [secret] : []), ...desiredState(rs, { serviceMonitor: false }).apply];
    return children.map((c) => toClientModel<KubernetesObject>({ ...c, metadata: { ...c.metadata, ownerReferences: undefined } }));
  });
}

/** Plain creates, `callers` resources' worth at once, over shared connections as the operator's; seconds taken. */
async function createAll(kc: KubeConfig, perResource: KubernetesObject[][], callers: number): Promise<number> {
  const objects = KubernetesObjectApi.makeApiClient(ReusingKubeConfig.from(kc));
  const t0 = performance.now();
  await pool(perResource, callers, async (children) => {
    for (const c of children) await objects.create(c);
  });
  return (performance.now() - t0) / 1000;
}

async function deleteAll(kc: KubeConfig, perResource: KubernetesObject[][]): Promise<void> {
  const objects = KubernetesObjectApi.makeApiClient(ReusingKubeConfig.from(kc));
  await pool(perResource, 8, async (children) => {
    for (const c of children) await objects.delete(c);
  });
}

/** CPU seconds of the control plane's processes (their command lines name the cluster's temp dir). */
function clusterCpu(cluster: TestCluster): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd[0].endsWith('node') || !cmd.some((a) => a.includes(cluster.dir))) continue;
      out.set(path.basename(cmd[0]), procStats(Number(entry)).cpuS);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

function startOperator(cluster: TestCluster, port: number, workers: number, cpuProf?: string): ChildProcess {
  const log = fs.openSync(path.join(cluster.dir, 'operator.log'), 'a');
  const child = spawn(
    process.execPath,
    [
      ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${cpuProf}`] : []),
      '--import',
      'tsx',
      path.join(ROOT, 'src/cli/main.ts'),
      'operator',
      `--kubeconfig=${cluster.kubeConfigFile()}`,
      '--lease-namespace=bench',
      '--health-host=127.0.0.1',
      `--health-port=${port}`,
      `--workers=${workers}`,
      '--resync-seconds=10',
    ],
    { cwd: ROOT, stdio: ['ignore', log, log], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  fs.closeSync(log);
  return child;
}

interface Options {
  workers: number;
  steadyMs: number;
  cpuProf?: string;
}

async function benchOne(n: number, o: Options): Promise<void> {
  const { tools, missing } = findClusterTools();
  if (!tools) {
    console.log(`skipped: ${missing}`);
    return;
  }
  const nodes = nodesFor(n);
  const cluster = await startCluster(tools);
  let controllers: { stop(): Promise<void> } | undefined;
  let operator: ChildProcess | undefined;
  try {
    const kc = cluster.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const apps = kc.makeApiClient(AppsV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of yamlDocs(path.join(ROOT, 'crds/cv.recognition.io_recognitionservices.yaml'))) {
      await ext.createCustomResourceDefinition({ body: toClientModel(crd as KubernetesObject) });
    }
    for (const name of ['raw', 'direct', 'bench']) await core.createNamespace({ body: { metadata: { name } } });
    const list = resources(n);

    // Limit 1, the bare kube-apiserver: no controller runs yet, so nothing reacts to the objects.
    const raw = childrenOf(list, 'raw');
    const rawObjects = raw.reduce((k, c) => k + c.length, 0);
    const rawSeconds = await createAll(kc, raw, o.workers);
    await deleteAll(kc, raw);

    controllers = await startControllers(cluster, tools, path.join(ROOT, 'test/operator/e2e/kwok-stages.yaml'));
    const taint = [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }];
    await addFakeNodes(kc, [
      ...Array.from({ length: nodes }, (_, i) => fakeNode(`gpu-${i}`, { 'nvidia.com/gpu': '2' }, { 'nvidia.com/gpu.present': 'true' }, taint)),
      ...Array.from({ length: nodes }, (_, i) => fakeNode(`cpu-${i}`, {})),
    ]);
    await eventually(async () => ((await custom.listClusterCustomObject(GROUP)) ? true : undefined), 'CRD served');

    // Limit 2, the cluster alone: the same children created directly, until every Deployment is available.
    const direct = childrenOf(list, 'direct');
    const tDirect = performance.now();
    const directCreated = await createAll(kc, direct, o.workers);
    await eventually(async () => {
      const deps = (await apps.listNamespacedDeployment({ namespace: 'direct', resourceVersion: '0' })).items;
      const available = deps.filter((d) => (d.status?.availableReplicas ?? 0) >= (d.spec?.replicas ?? 1) && d.status?.observedGeneration === d.metadata?.generation);
      return available.length === 2 * n ? true : undefined;
    }, 'direct Deployments available', READY_TIMEOUT_MS);
    const directSeconds = (performance.now() - tDirect) / 1000;
    // Out of the way before the operator's turn: the garbage collector and kwok remove the pods.
    await deleteAll(kc, direct);
    await eventually(async () => ((await core.listNamespacedPod({ namespace: 'direct' })).items.length === 0 ? true : undefined), 'direct pods gone', 300_000);

    const port = await freePort();
    operator = startOperator(cluster, port, o.workers, o.cpuProf);
    const pid = operator.pid!;
    const opMetrics = () => get(`http://127.0.0.1:${port}/metrics`);
    await eventually(async () => (promSum(await opMetrics(), 'leader_election_master_status') === 1 ? true : undefined), 'operator leads', 120_000);
    const apiMetrics = async () => promSum(await get(`${cluster.server}/metrics`, cluster.admin.token), 'apiserver_request_total');

    const snapshot = async () => {
      const text = await opMetrics();
      return {
        at: performance.now(),
        proc: procStats(pid),
        cluster: clusterCpu(cluster),
        requests: promSum(text, 'rest_client_requests_total'),
        // The informers' lists aside, and the Lease (a GET and a PUT every 2 s).
        reconcileRequests:
          promSum(text, 'rest_client_requests_total') -
          promSum(text, 'rest_client_requests_total', (l) => l.includes('method="LIST"')) -
          2 * promSum(text, 'rest_client_requests_total', (l) => l.includes('method="PUT"')),
        writes: promSum(text, 'rest_client_requests_total', (l) => /method="(PATCH|POST|PUT|DELETE)"/.test(l)),
        leaseWrites: promSum(text, 'rest_client_requests_total', (l) => l.includes('method="PUT"')),
        reconciles: promSum(text, 'controller_runtime_reconcile_total'),
        errors: promSum(text, 'controller_runtime_reconcile_total', (l) => l.includes('result="error"')),
        busyS: promSum(text, 'controller_runtime_reconcile_time_seconds_sum'),
        waitS: promSum(text, 'workqueue_queue_duration_seconds_sum'),
        waits: promSum(text, 'workqueue_queue_duration_seconds_count'),
        statusWrites: promSum(text, 'recognition_operator_status_writes_total'),
        childWrites: promSum(text, 'recognition_operator_child_writes_total'),
        apiserver: await apiMetrics(),
      };
    };
    const s0 = await snapshot();
    let benchRequests = 0;
    for (const body of list) {
      await custom.createNamespacedCustomObject({ ...GROUP, namespace: 'bench', body });
      benchRequests++;
    }
    // Where the time goes: the operator's writes, then the controllers/scheduler/kwok, then the operator's status.
    const marks: { deployments?: number; pods?: number; ready?: number } = {};
    let last = '';
    const deadline = s0.at + READY_TIMEOUT_MS;
    for (;;) {
      const t = (performance.now() - s0.at) / 1000;
      const [rss, deps, pods] = await Promise.all([
        custom.listNamespacedCustomObject({ ...GROUP, namespace: 'bench', resourceVersion: '0' }) as Promise<{ items: RecognitionService[] }>,
        apps.listNamespacedDeployment({ namespace: 'bench', resourceVersion: '0' }),
        core.listNamespacedPod({ namespace: 'bench', resourceVersion: '0' }),
      ]);
      benchRequests += 3;
      const ready = rss.items.filter((r) => r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      const podsReady = pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      if (deps.items.length === 2 * n) marks.deployments ??= t;
      if (podsReady === 3 * n) marks.pods ??= t;
      last = `${deps.items.length}/${2 * n} Deployments, ${podsReady}/${3 * n} pods Ready, ${ready}/${n} resources Ready`;
      if (ready === n) {
        marks.ready = t;
        break;
      }
      if (performance.now() > deadline) throw new Error(`not all Ready after ${READY_TIMEOUT_MS / 1000} s: ${last}`);
      await sleep(POLL_MS);
    }
    const s1 = await snapshot();

    // Steady state: resyncs every 10 s reconcile every resource; nothing changed, so nothing is written.
    await sleep(5_000);
    const s2 = await snapshot();
    await sleep(o.steadyMs);
    const s3 = await snapshot();

    const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
    const rampS = (s1.at - s0.at) / 1000;
    const rampReconciles = s1.reconciles - s0.reconciles;
    const rampRequests = s1.reconcileRequests - s0.reconcileRequests;
    const steadyS = (s3.at - s2.at) / 1000;
    const steadyReconciles = s3.reconciles - s2.reconciles;
    const steadyObjectWrites = s3.writes - s2.writes - (s3.leaseWrites - s2.leaseWrites);
    const apiserverRequests = s1.apiserver - s0.apiserver - benchRequests;
    const cpuOf = (name: string) => (s1.cluster.get(name) ?? NaN) - (s0.cluster.get(name) ?? NaN);
    console.log(`\n--- ${n} resources (${2 * n} Deployments, ${3 * n} pods), ${2 * nodes} nodes (${nodes} with 2 GPUs), ${o.workers} workers ---`);
    console.log(
      `limit 1, bare kube-apiserver: ${f(rawSeconds, 2)} s for ${rawObjects} plain creates of the same children (${o.workers} callers, ${f(rawObjects / rawSeconds, 0)}/s)`,
    );
    console.log(
      `limit 2, cluster alone: the same children created directly (${f(directCreated)} s), every Deployment available after ${f(directSeconds)} s`,
    );
    console.log(
      `time to all Ready: ${f(marks.ready ?? NaN)} s (every Deployment created at ${f(marks.deployments ?? NaN)} s, every pod Ready at ${f(marks.pods ?? NaN)} s; the bench polls each ${POLL_MS / 1000} s)`,
    );
    console.log(
      `operator until all Ready: ${rampReconciles} reconciles (${s1.errors - s0.errors} errors, ${f(rampReconciles / rampS)}/s), ` +
        `${rampRequests} API requests besides informer lists and Lease (${f(rampRequests / rampReconciles, 2)} per reconcile; ` +
        `${s1.childWrites - s0.childWrites} child applies, ${s1.statusWrites - s0.statusWrites} status writes); ` +
        `workers busy ${f((100 * (s1.busyS - s0.busyS)) / (rampS * o.workers), 0)}%, mean reconcile ${f((1000 * (s1.busyS - s0.busyS)) / rampReconciles, 0)} ms, ` +
        `mean queue wait ${f((1000 * (s1.waitS - s0.waitS)) / (s1.waits - s0.waits), 0)} ms`,
    );
    console.log(
      `CPU until all Ready: operator ${f(s1.proc.cpuS - s0.proc.cpuS, 2)} s (${f((1000 * (s1.proc.cpuS - s0.proc.cpuS)) / rampReconciles, 1)} ms per reconcile); ` +
        [...s1.cluster.keys()].sort().map((k) => `${k} ${f(cpuOf(k))} s`).join(', '),
    );
    console.log(`kube-apiserver until all Ready: ${apiserverRequests} requests from every client but the bench (the operator's share: ${f((100 * (s1.requests - s0.requests)) / apiserverRequests, 0)}%)`);
    console.log(
      `steady state over ${f(steadyS, 0)} s: ${steadyReconciles} reconciles, ${steadyObjectWrites} writes besides Lease renewals (${steadyReconciles ? f(steadyObjectWrites / steadyReconciles, 3) : '-'} per reconcile), ` +
        `${s3.reconcileRequests - s2.reconcileRequests} requests besides lists and Lease, CPU ${f(s3.proc.cpuS - s2.proc.cpuS, 2)} s (${f((100 * (s3.proc.cpuS - s2.proc.cpuS)) / steadyS, 1)}% of a core)`,
    );
    console.log(`operator process: RSS ${f(s3.proc.rssMiB, 0)} MiB, peak ${f(s3.proc.peakRssMiB, 0)} MiB; CPU ${f(s3.proc.cpuS, 1)} s in all (${f(s0.proc.cpuS, 1)} s of it before the first resource: start-up, tsx's compilation)`);
  } finally {
    if (operator) await stopProcess(operator);
    await controllers?.stop();
    await cluster.stop();
  }
}

export async function run(): Promise<void> {
  const { resources: counts, ...o } = options();
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`load average ${load()} on ${os.cpus().length} cores at the start`);
  for (const n of counts) await benchOne(n, o);
  console.log(`load average ${load()} at the end`);
}
