/**
 * The product as it is deployed: the images scripts/images.sh builds from this repo, on a
 * real one-node cluster (scripts/real-cluster.sh: kubelet, containerd, a CNI bridge,
 * kube-proxy, CoreDNS), installed through the user's front door — `kubectl apply` of
 * deploy/dependencies, `helm install` of the operator chart, the sample chart's
 * RecognitionService — and then used and disturbed under load.
 *
 * Heavy: it needs root, a running dockerd with the images built (.ci/run builds them) and the
 * node tools of scripts/k8s-tools.sh. Outside CI a missing prerequisite skips it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';
import { buildTestApp, json } from '../helpers/app.js';
import { clusterDown, clusterState, clusterUp, imagesScript, loadImages, missingPrerequisite, type RealCluster } from './helpers/real-cluster.js';

type Any = any;
interface Detection { label: string; external_id: string; bounding_box: { x: number; y: number; width: number; height: number } }

const NS = 'recog-e2e';
/** The canary model the rollout test sends half the requests to, then promotes. */
const CANARY = 'centernet-canary';
const OPERATOR_NS = 'recognition-system';
const [API_IMAGE, OPERATOR_IMAGE, TRITON_IMAGE] = (await imagesScript('list')).trim().split(/\s+/) as [string, string, string];
/** deploy/dependencies names the official images; CI deploys local stand-ins with the same interface. */
const DEPENDENCY_IMAGES = Object.fromEntries((await imagesScript('deps-list')).trim().split('\n').map((line) => line.split('=') as [string, string]));
const IMAGES = [API_IMAGE, OPERATOR_IMAGE, TRITON_IMAGE, ...Object.values(DEPENDENCY_IMAGES)];

const skip = await missingPrerequisite(IMAGES);
if (skip && process.env.CI === 'true') throw new Error(`real-cluster e2e: ${skip}`);
if (skip) console.log(`# real-cluster e2e skipped: ${skip}`);

/** One POST on a fresh connection, the way a client with no keep-alive pool sends it. */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', agent: false, timeout: 60_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 60 s')));
    req.on('error', reject);
    req.end(data);
  });
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, timeout: 30_000, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** One answer under load: `done` for a detection delivered (200, status DONE), with the model that answered; the rest kept whole. */
interface Outcome { status: number; done: boolean; model?: string; retryAfter?: string; error?: string; body?: string }

/** Unique across the suite: a repeated external_id would be an idempotent replay, never charged. */
let requestCount = 0;

type Load = { outcomes: Outcome[]; answered(count: number, what: string): Promise<void> };

/**
 * Runs `body` under steady load (`workers` clients sending sync requests back to back) and
 * returns every answer; the load stops however `body` ends.
 */
async function underLoad(url: string, key: string, image: Buffer, body: (load: Load) => Promise<void>, workers = 2): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      try {
        const res = await post(url, { external_id: `load-${process.pid}-${++requestCount}`, image_base64: image.toString('base64') }, { 'x-api-key': key });
        const answer = res.status === 200 ? (JSON.parse(res.body) as { status: string; model?: { name: string } | null }) : undefined;
        const done = answer?.status === 'DONE';
        outcomes.push({ status: res.status, done, model: done ? answer.model?.name : undefined, retryAfter: res.headers['retry-after'], body: done ? undefined : res.body });
      } catch (err) {
        outcomes.push({ status: 0, done: false, error: String(err) });
      }
    }
  });
  const load: Load = {
    outcomes,
    async answered(count, what) {
      const target = outcomes.length + count;
      await eventually(() => outcomes.length >= target, { what: `${count} answered requests ${what}`, timeoutMs: 180_000, intervalMs: 200 });
    },
  };
  try {
    await body(load);
  } finally {
    running = false;
    await Promise.all(loops);
  }
  return outcomes;
}

const detectionsOf = (body: string): Detection[] => (JSON.parse(body) as { results: Detection[] }).results;
const sameDetections = (a: Detection[], b: Detection[]) => {
  assert.equal(a.length, b.length, `${JSON.stringify(a)}\n${JSON.stringify(b)}`);
  const key = (d: Detection) => `${d.label}:${d.bounding_box.x}:${d.bounding_box.y}`;
  const sorted = (ds: Detection[]) => [...ds].sort((p, q) => key(p).localeCompare(key(q)));
  for (const [p, q] of sorted(a).map((d, i) => [d, sorted(b)[i]] as const)) {
    assert.equal(p.label, q.label);
    for (const k of ['x', 'y', 'width', 'height'] as const) assert.ok(Math.abs(p.bounding_box[k] - q.bounding_box[k]) <= 1, `${k}: ${JSON.stringify(p)} vs ${JSON.stringify(q)}`);
  }
};

describe('deployed for real: images from this repo on a one-node cluster', { skip: skip ?? false, timeout: 1_500_000 }, () => {
  let cluster: RealCluster;
  let images: ImageServer;
  let work: string;
  let apiUrl: string;
  let key: string;
  const basketball = readFixture('basketball1.png');

  const kubectl = (...args: string[]) => cluster.kubectl(args);
  const jsonOf = async (...args: string[]): Promise<Any> => JSON.parse(await cluster.kubectl([...args, '-o', 'json']));
  const recog = (...args: string[]) => cluster.kubectl(['exec', '-n', NS, 'deploy/vision-api', '--', 'node', 'bin/recog.js', ...args]);
  const balance = async () => (JSON.parse(await recog('orgs', 'balance', 'acme', '--json')) as { balance: number }).balance;
  const ready = (what: string) =>
    eventually(async () => {
      const rs = await jsonOf('get', 'recsvc', 'vision', '-n', NS);
      const cond = rs.status?.conditions?.find((c: Any) => c.type === 'Ready');
      return rs.status?.observedGeneration === rs.metadata.generation && cond?.status === 'True' ? rs : undefined;
    }, { what, timeoutMs: 600_000, intervalMs: 1000 });
  const syncUrl = () => `${apiUrl}/v1/cv/requests/sync`;
  /** A spec change the operator turns into a new API pod template: one more env var. */
  const setApiEnv = async (name: string) => {
    const rs = await jsonOf('get', 'recsvc', 'vision', '-n', NS);
    const env = [...(rs.spec.api.env ?? []).filter((e: Any) => e.name !== name), { name, value: String(Date.now()) }];
    await cluster.kubectl(['patch', 'recsvc', 'vision', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { api: { env } } })]);
  };
  /** Waits for exactly two API pods, both Ready (and `also` their names, if given). */
  const twoReadyApiPods = (what: string, also: (names: string[]) => boolean = () => true) =>
    eventually(async () => {
      const pods = await apiPods();
      const readyPods = pods.filter((p) => p.status.conditions?.some((c: Any) => c.type === 'Ready' && c.status === 'True'));
      return pods.length === 2 && readyPods.length === 2 && also(pods.map((p) => p.metadata.name as string));
    }, { what: `${what}: two Ready API pods`, timeoutMs: 300_000, intervalMs: 500 });
  const apiPods = async () => (await jsonOf('get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/component=api')).items as Any[];

  before(async () => {
    // A fresh cluster (a kept one from an earlier run is taken down first); images stay loaded.
    await clusterDown();
    cluster = await clusterUp();
    try {
      await install();
    } catch (err) {
      // The failure alone rarely says why: the cluster's state goes with it into the CI output.
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await clusterState(cluster, OPERATOR_NS)}`, { cause: err });
    }
  });

  /** The user's front door, from loaded images to a Ready RecognitionService and an API key. */
  async function install() {
    await loadImages(IMAGES);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'recog-real-e2e-'));

    // Dependencies as deploy/dependencies tells a user to run them, on the local stand-in images.
    for (const file of fs.readdirSync(path.join(REPO_ROOT, 'deploy/dependencies')).filter((f) => f.endsWith('.yaml')).sort()) {
      let text = fs.readFileSync(path.join(REPO_ROOT, 'deploy/dependencies', file), 'utf8');
      for (const [official, local] of Object.entries(DEPENDENCY_IMAGES)) text = text.replaceAll(`image: ${official}`, `image: ${local}`);
      await cluster.kubectl(['apply', '-f', '-'], text);
    }

    // The prepared model repository on the node's disk, claimed through a PersistentVolume.
    const models = path.join(work, 'models');
    fs.cpSync(path.join(REPO_ROOT, 'model-repository'), models, { recursive: true });
    // A second model for the canary: the same network under another name, with its own catalog.
    const canaryDir = path.join(models, CANARY);
    fs.mkdirSync(path.join(canaryDir, '1'), { recursive: true });
    fs.copyFileSync(path.join(models, 'centernet', '1', 'model.onnx'), path.join(canaryDir, '1', 'model.onnx'));
    fs.writeFileSync(path.join(canaryDir, 'config.pbtxt'), fs.readFileSync(path.join(models, 'centernet', 'config.pbtxt'), 'utf8').replace('name: "centernet"', `name: "${CANARY}"`));
    const catalog = JSON.parse(fs.readFileSync(path.join(models, 'centernet', 'catalog.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(canaryDir, 'catalog.json'), JSON.stringify({ ...catalog, model: { name: CANARY, version: '1' } }));
    fs.chmodSync(work, 0o755);
    await kubectl('create', 'namespace', NS);
    const volume = [
      { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `${NS}-models` }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadOnlyMany'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: '', hostPath: { path: models, type: 'Directory' }, claimRef: { namespace: NS, name: 'models' } } },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'models', namespace: NS }, spec: { accessModes: ['ReadOnlyMany'], storageClassName: '', volumeName: `${NS}-models`, resources: { requests: { storage: '1Gi' } } } },
    ];
    await cluster.kubectl(['apply', '-f', '-'], volume.map((d) => stringify(d)).join('---\n'));

    // Images that batch requests fetch: served on the node's bridge, allowed by the API's fetch policy.
    const gateway = cluster.env.REAL_CLUSTER_NODE_IP;
    images = await startImageServer({ host: gateway });

    await cluster.helm(['install', 'recognition-operator', path.join(REPO_ROOT, 'charts/recognition-operator'), '-n', OPERATOR_NS, '--create-namespace', '--wait', '--timeout', '5m']);

    const values = {
      api: {
        replicas: { min: 2, max: 2 },
        // Sized for a 2-core node that also runs the control plane, the dependencies and a surge pod.
        resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
        env: [{ name: 'IMAGE_FETCH_ALLOW_CIDRS', value: `${gateway}/32` }],
        imageStorage: { s3: { bucket: 'recognition-images', prefix: 'images', endpoint: 'http://minio.storage.svc:9000', region: 'us-east-1', forcePathStyle: true, credentialsSecret: 'minio-credentials' } },
      },
      secrets: { databaseUrl: 'postgres://recog:change-me@postgres.databases.svc:5432/recognition', redisUrl: 'redis://redis.databases.svc:6379' },
      // Both models loaded from the start: the canary's start and promotion never restart Triton.
      triton: { image: TRITON_IMAGE, storageUri: 'pvc://models', gpus: 0, replicas: { min: 1, max: 1 }, models: ['centernet', CANARY], resources: { requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '2Gi' } } },
      autoscaling: { enabled: false },
      serviceMonitor: false,
    };
    fs.writeFileSync(path.join(work, 'values.yaml'), stringify(values));
    // From a file, as the README says: a secret never on a command line.
    fs.writeFileSync(path.join(work, 'minio.env'), 'AWS_ACCESS_KEY_ID=recognition\nAWS_SECRET_ACCESS_KEY=change-me-minio\n', { mode: 0o600 });
    await kubectl('create', 'secret', 'generic', 'minio-credentials', '-n', NS, `--from-env-file=${path.join(work, 'minio.env')}`);
    const manifest = await cluster.helm(['template', 'vision', path.join(REPO_ROOT, 'charts/recognition-service-sample'), '-n', NS, '-f', path.join(work, 'values.yaml')]);
    await cluster.kubectl(['apply', '-n', NS, '-f', '-'], manifest);
    await ready('the RecognitionService Ready');

    const service = await jsonOf('get', 'service', 'vision-api', '-n', NS);
    apiUrl = `http://${service.spec.clusterIP}:${service.spec.ports[0].port}`;
    await recog('orgs', 'create', 'acme', '--balance', '100000');
    key = (JSON.parse(await recog('keys', 'create', '--org', 'acme', '--name', 'e2e', '--classes', '*', '--rate-limit', '100000', '--json')) as { key: string }).key;
  }

  after(async () => {
    await images?.close();
    if (!skip && !process.env.KEEP_REAL_CLUSTER) await clusterDown();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('Ready, and kubectl get recsvc shows it', async () => {
    const table = await kubectl('get', 'recsvc', 'vision', '-n', NS);
    const [header, row] = table.trim().split('\n');
    assert.match(header, /NAME\s+READY\s+REASON\s+API\s+TRITON/);
    assert.match(row, /^vision\s+True\s+\S+\s+2\/2\b.*\s+1\/1\b/, table);
  });

  test('sync and batch through the Service (ClusterIP via kube-proxy) answer as the embedded service does', async () => {
    const embedded = await buildTestApp();
    let expected: Detection[];
    try {
      const res = await embedded.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': (await embedded.newKey()).key }, payload: { external_id: 'embedded', image_base64: basketball.toString('base64') } });
      expected = json<{ results: Detection[] }>(res).results;
    } finally {
      await embedded.close();
    }
    assert.ok(expected.length > 0);

    const sync = await post(`${apiUrl}/v1/cv/requests/sync`, { external_id: 'e2e-sync', image_base64: basketball.toString('base64') }, { 'x-api-key': key });
    assert.equal(sync.status, 200, sync.body);
    sameDetections(detectionsOf(sync.body), expected);

    const batch = await post(`${apiUrl}/v1/cv/requests/batch`, { external_id: 'e2e-batch', image_urls: [images.url('/images/basketball1.png'), images.url('/status/404')] }, { 'x-api-key': key });
    assert.equal(batch.status, 200, batch.body);
    const entries = (JSON.parse(batch.body) as { results: Array<{ status: string; results: Detection[] }> }).results;
    assert.deepEqual(entries.map((e) => e.status), ['DONE', 'FAILED']);
    sameDetections(entries[0].results, expected);
  });

  test('kubectl port-forward to the Service, as a user would', async () => {
    const pf = cluster.portForward(NS, 'service/vision-api', 8080);
    try {
      const port = await pf.port;
      const res = await post(`http://127.0.0.1:${port}/v1/cv/requests/sync`, { external_id: 'e2e-port-forward', image_base64: basketball.toString('base64') }, { 'x-api-key': key });
      assert.equal(res.status, 200, res.body);
      assert.ok(detectionsOf(res.body).some((d) => d.label === 'person'));
    } finally {
      pf.stop();
    }
  });

  test("an image_url written by one replica is served by the other", async () => {
    const pods = (await apiPods()).filter((p) => p.status.podIP && p.metadata.deletionTimestamp === undefined);
    assert.equal(pods.length, 2);
    const [a, b] = pods.map((p) => `http://${p.status.podIP}:8080`);
    const res = await post(`${a}/v1/cv/requests/sync`, { external_id: 'e2e-image-url', image_base64: basketball.toString('base64') }, { 'x-api-key': key });
    assert.equal(res.status, 200, res.body);
    const imageUrl = new URL((JSON.parse(res.body) as { image_url: string }).image_url);
    const served = await get(`${b}${imageUrl.pathname}${imageUrl.search}`);
    assert.equal(served.status, 200);
    assert.ok(served.body.equals(basketball), 'the other replica serves the bytes the first one stored (S3 on MinIO)');
  });

  test('a rolling update of the API under steady load fails no request', async () => {
    const outcomes = await underLoad(syncUrl(), key, basketball, async (load) => {
      await load.answered(4, 'before the update');
      const before = (await apiPods()).map((p) => p.metadata.name as string);
      await setApiEnv('E2E_ROLLOUT');
      await twoReadyApiPods('both API pods replaced', (names) => names.every((n) => !before.includes(n)));
      await ready('Ready after the rolling update');
      await load.answered(4, 'after the update');
    });
    const failed = outcomes.filter((o) => !o.done);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests failed`);
  });

  test('a canary of another model under load, then its promotion: no failed request, each answer names its model', async () => {
    const tritonPods = async () => ((await jsonOf('get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/component=triton')).items as Any[]).map((p) => p.metadata.uid as string);
    const triton = await tritonPods();
    const rolled = async (patch: unknown, what: string) => {
      const before = (await apiPods()).map((p) => p.metadata.name as string);
      await cluster.kubectl(['patch', 'recsvc', 'vision', '-n', NS, '--type=merge', '-p', JSON.stringify(patch)]);
      await twoReadyApiPods(what, (names) => names.every((n) => !before.includes(n)));
      await ready(`Ready: ${what}`);
    };
    let switched = 0;
    let promoted = 0;
    const outcomes = await underLoad(syncUrl(), key, basketball, async (load) => {
      await load.answered(4, 'before the canary');
      await rolled({ spec: { canary: { modelName: CANARY, weight: 50 } } }, 'the canary at 50 %');
      switched = load.outcomes.length;
      await eventually(() => load.outcomes.slice(switched).filter((o) => o.model === CANARY).length >= 3 && load.outcomes.slice(switched).filter((o) => o.model === 'centernet').length >= 3, {
        what: 'answers from both models',
        timeoutMs: 180_000,
        intervalMs: 200,
      });
      // Promoted for good, as docs/operator.md says: the canary becomes the stable model.
      await rolled({ spec: { triton: { modelName: CANARY }, canary: null } }, 'the canary promoted');
      promoted = load.outcomes.length;
      await load.answered(6, 'after the promotion');
    });
    const failed = outcomes.filter((o) => !o.done);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests failed`);
    assert.ok(outcomes.slice(0, 4).every((o) => o.model === 'centernet'), 'the stable model before the canary');
    // The API pods of the promotion answer with the canary only; the old ones, draining, may still answer either way.
    const last = outcomes.slice(promoted).slice(-4);
    assert.deepEqual([...new Set(last.map((o) => o.model))], [CANARY], `after the promotion: ${last.map((o) => o.model).join(', ')}`);
    const rs = await jsonOf('get', 'recsvc', 'vision', '-n', NS);
    assert.equal(rs.status.rollout.phase, 'Stable');
    assert.deepEqual(await tritonPods(), triton, 'Triton never restarted');
  });

  test('an API pod deleted under load: in-flight requests finish, new ones go to the other', async () => {
    const outcomes = await underLoad(syncUrl(), key, basketball, async (load) => {
      await load.answered(4, 'before the deletion');
      const [victim] = await apiPods();
      await kubectl('delete', 'pod', '-n', NS, victim.metadata.name, '--wait=true');
      await load.answered(6, 'after the deletion');
    });
    const failed = outcomes.filter((o) => !o.done);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests failed`);
    await twoReadyApiPods('the deleted API pod replaced');
  });

  test('the Triton pod killed under load: contract answers only, recovery on its own, nothing charged for undelivered work', async () => {
    const start = await balance();
    const outcomes = await underLoad(syncUrl(), key, basketball, async (load) => {
      await load.answered(4, 'before the kill');
      const [triton] = (await jsonOf('get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/component=triton')).items;
      await kubectl('delete', 'pod', '-n', NS, triton.metadata.name, '--grace-period=0', '--force');
      await eventually(() => load.outcomes.some((o) => !o.done), { what: 'a refusal while no Triton runs', timeoutMs: 120_000, intervalMs: 200 });
      // Recovery without intervention: the Deployment's new pod, then detections again.
      await eventually(() => {
        const lastRefusal = load.outcomes.findLastIndex((o) => !o.done);
        return load.outcomes.slice(lastRefusal + 1).length >= 6;
      }, { what: 'detections again once the new Triton pod is ready', timeoutMs: 300_000, intervalMs: 500 });
    });
    // The contract's answers when nothing could run: the request recorded ERROR with the
    // recognition step's 503, or 503 with Retry-After; never a refused connection or a 500.
    const contractRefusal = (o: Outcome) => {
      if (o.status === 503) return o.retryAfter !== undefined;
      const body = o.status === 200 ? (JSON.parse(o.body!) as { status: string; response_code: number }) : undefined;
      return body?.status === 'ERROR' && body.response_code === 503;
    };
    const odd = outcomes.filter((o) => !o.done && !contractRefusal(o));
    assert.deepEqual(odd, [], 'every answer is a detection or a contract refusal');
    assert.ok(outcomes.some((o) => !o.done), 'the outage was seen');
    const delivered = outcomes.filter((o) => o.done).length;
    assert.equal(start - (await balance()), delivered, 'charged exactly for the delivered detections');
  });

  test('the operator pod deleted mid-reconcile: the new leader finishes the job', async () => {
    const holder = async () => ((await jsonOf('get', 'lease', '-n', OPERATOR_NS)).items as Any[]).map((l) => l.spec.holderIdentity as string | undefined).find(Boolean);
    const before = await holder();
    assert.ok(before, 'an operator leads');
    const leader = ((await jsonOf('get', 'pods', '-n', OPERATOR_NS)).items as Any[]).find((p) => before.startsWith(p.metadata.name));
    assert.ok(leader, `the leader's pod (${before})`);
    // Killed first, then the change: the dead leader still holds the Lease, so the change
    // waits for the standby to take it over and reconcile.
    await kubectl('delete', 'pod', '-n', OPERATOR_NS, leader.metadata.name, '--grace-period=0', '--force');
    await setApiEnv('E2E_LEADER');
    const done = await ready('Ready for the new generation after the leader was deleted');
    const after = await holder();
    assert.ok(after && after !== before, `another replica leads (${before} → ${after})`);
    const deployment = await jsonOf('get', 'deployment', 'vision-api', '-n', NS);
    assert.ok(deployment.spec.template.spec.containers[0].env.some((e: Any) => e.name === 'E2E_LEADER'), 'the change reached the Deployment');
    assert.equal(done.status.observedGeneration, done.metadata.generation);
  });

  test('kubectl delete recsvc: every child is gone', async () => {
    const owned = async () => {
      const all = await jsonOf('get', 'deployments,services,secrets,configmaps,poddisruptionbudgets,networkpolicies,horizontalpodautoscalers,serviceaccounts', '-n', NS);
      return (all.items as Any[]).filter((o) => o.metadata.ownerReferences?.some((r: Any) => r.kind === 'RecognitionService'));
    };
    assert.ok((await owned()).length > 0);
    await kubectl('delete', 'recsvc', 'vision', '-n', NS, '--wait=true');
    await eventually(async () => ((await owned()).length === 0 && (await apiPods()).length === 0 ? true : undefined), { what: 'every child and pod gone', timeoutMs: 180_000, intervalMs: 1000 });
  });
});

