/**
 * The operator keeps nothing in memory that the cluster can tell it (controller-runtime's
 * rule): it watches every child it owns, the signing-key Secret included, and a restarted
 * operator finds everything as desired and writes nothing. Against a real kube-apiserver
 * (scripts/k8s-tools.sh), with the chart's RBAC when helm is installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { RecognitionOperator } from '../../src/operator/operator.js';
import { toClientModel } from '../../src/operator/kube.js';
import { SIGNING_SECRET_UID_ANNOTATION } from '../../src/operator/desired/api.js';
import { CHILD_KINDS } from '../../src/operator/desired/index.js';
import type { RecognitionService } from '../../src/operator/api/types.js';
import { applyChartRbac, eventually, findTools, installCrds, SERVICE_MONITOR_CRD, startCluster, testOperator, type TestCluster } from './helpers/cluster.js';

type Any = any;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const NS = 'team-s';
const OP_NS = 'recognition-system';
const NAME = 'keyless';
/** A resync far beyond every wait below: what happens in time is the watches' doing. */
const OPTIONS = { leaseNamespace: OP_NS, resyncPeriodMs: 600_000 };
const WATCH_TIMEOUT_MS = 30_000;

const parseYaml = (text: string): Any[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);

const { tools, missing } = findTools();
if (!tools) console.log(`# owned-secrets cluster tests skipped: ${missing}`);

describe('the operator watches what it owns and keeps no memory of it', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let kc: KubeConfig;
  let operatorKc: KubeConfig;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let objects: KubernetesObjectApi;
  let operator: RecognitionOperator | undefined;

  const start = async (identity: string) => {
    const op = testOperator(operatorKc, { identity, ...OPTIONS });
    await op.start();
    await eventually(async () => (op.isLeader ? true : undefined), `${identity} to lead`);
    return op;
  };
  const secret = () => core.readNamespacedSecret({ name: `${NAME}-api-image-url`, namespace: NS });
  const podTemplateUid = async () => (await apps.readNamespacedDeployment({ name: `${NAME}-api`, namespace: NS })).spec?.template.metadata?.annotations?.[SIGNING_SECRET_UID_ANNOTATION];
  const keyOf = (s: Awaited<ReturnType<typeof secret>>) => Buffer.from(s.data!.IMAGE_URL_SECRET, 'base64').toString();

  /** "Kind name" → resourceVersion of the resource, every object it owns and its Events. */
  const snapshot = async (): Promise<Map<string, string>> => {
    const out = new Map<string, string>();
    const rs = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: NAME })) as RecognitionService;
    out.set(`RecognitionService ${NAME}`, rs.metadata.resourceVersion!);
    const selector = 'app.kubernetes.io/managed-by=recognition-operator';
    for (const k of [...CHILD_KINDS, { apiVersion: 'v1', kind: 'Secret' }]) {
      const list = await objects.list(k.apiVersion, k.kind, NS, undefined, undefined, undefined, undefined, selector);
      for (const o of list.items) out.set(`${k.kind} ${o.metadata?.name}`, o.metadata!.resourceVersion!);
    }
    for (const e of (await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: NS })).items) {
      out.set(`Event ${e.metadata?.name}`, e.metadata!.resourceVersion!);
    }
    return out;
  };

  /** Once the status of the last change is written and nothing moves between two looks a second apart: the snapshot. */
  const settled = async () => {
    await eventually(async () => {
      const r = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: NAME })) as RecognitionService;
      return r.status?.observedGeneration === r.metadata.generation ? true : undefined;
    }, 'status written');
    return eventually(async () => {
      const a = await snapshot();
      await new Promise((r) => setTimeout(r, 1_000));
      const b = await snapshot();
      return JSON.stringify([...a]) === JSON.stringify([...b]) ? b : undefined;
    }, 'the cluster to settle');
  };

  before(async () => {
    cluster = await startCluster(tools!);
    kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    // The CRD from crds/, and a stand-in for Prometheus Operator's: ServiceMonitors are children too.
    await installCrds(kc, [SERVICE_MONITOR_CRD]);
    for (const name of [NS, OP_NS]) await core.createNamespace({ body: { metadata: { name } } });

    // Exactly the chart's RBAC (it must let the operator watch Secrets), when helm can render it.
    operatorKc = tools!.helm ? await applyChartRbac(cluster, tools!.helm, OP_NS) : kc;
    operator = await start('operator-a');

    const rs = parseYaml(fs.readFileSync(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'), 'utf8'))[0];
    rs.metadata = { name: NAME, namespace: NS };
    delete rs.spec.api.imageUrlSecretRef; // the operator makes the signing key
    rs.spec.monitoring = { serviceMonitor: { enabled: false } }; // a switched-off child too
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: rs });
  });

  after(async () => {
    await operator?.stop();
    await cluster?.stop();
  });

  test('a signing Secret deleted by hand is made again at once, with a new key, and the API pods roll to it', async () => {
    const first = await eventually(async () => secret().catch(() => undefined), 'the signing Secret');
    await eventually(async () => ((await podTemplateUid().catch(() => undefined)) === first.metadata!.uid ? true : undefined), "the API pod template names the Secret's uid");
    // Nothing in flight: only a watch on the Secret can bring it back before the resync.
    await settled();

    await core.deleteNamespacedSecret({ name: `${NAME}-api-image-url`, namespace: NS });
    const second = await eventually(
      async () => {
        const s = await secret().catch(() => undefined);
        return s && s.metadata!.uid !== first.metadata!.uid ? s : undefined;
      },
      'the Secret made again by the running operator',
      WATCH_TIMEOUT_MS,
    );
    assert.equal(second.metadata!.ownerReferences?.[0]?.name, NAME);
    assert.match(keyOf(second), /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(keyOf(second), keyOf(first), 'a new random key');
    // The pods read the key at start: the Deployment rolls to the new Secret.
    await eventually(async () => ((await podTemplateUid()) === second.metadata!.uid ? true : undefined), 'the API Deployment rolled to the new Secret', WATCH_TIMEOUT_MS);
  });

  test('a restarted operator finds everything as desired and writes nothing, a standing field conflict included', async () => {
    // Another manager holds a field the operator sets but need not own: left to it, reported.
    await objects.patch(
      toClientModel({
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${NAME}-api`, namespace: NS },
        spec: { template: { spec: { containers: [{ name: 'api', resources: { limits: { memory: '3Gi' } } }] } } },
      }),
      undefined, undefined, 'someone', true, PatchStrategy.ServerSideApply,
    );
    const degraded = (r: RecognitionService) => r.status?.conditions?.find((c) => c.type === 'Degraded');
    await eventually(async () => {
      const r = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: NAME })) as RecognitionService;
      return degraded(r)?.reason === 'FieldConflict' ? true : undefined;
    }, 'Degraded FieldConflict');
    const was = await settled();
    await operator!.stop();
    operator = await start('operator-b');
    const metric = async (m: 'reconciles' | 'childWrites' | 'statusWrites') => (await operator!.metrics[m].get()).values.reduce((n, v) => n + v.value, 0);
    await eventually(async () => ((await metric('reconciles')) >= 1 ? true : undefined), 'a reconcile by the new operator');
    // Poke the resource's children once more, so a second pass runs over the new operator's caches.
    const reconciled = await metric('reconciles');
    await core.patchNamespacedService({ name: `${NAME}-api`, namespace: NS, body: { metadata: { annotations: { poke: '1' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await eventually(async () => ((await metric('reconciles')) > reconciled ? true : undefined), 'a reconcile after the poke');
    was.set(`Service ${NAME}-api`, (await core.readNamespacedService({ name: `${NAME}-api`, namespace: NS })).metadata!.resourceVersion!);

    assert.equal(await metric('childWrites'), 0, 'no child applied, created or deleted');
    assert.equal(await metric('statusWrites'), 0, 'no status written');
    const requests = (await operator.metrics.requests.get()).values.filter((v) => ['PATCH', 'DELETE'].includes(String(v.labels.method)));
    assert.deepEqual(requests.map((v) => `${v.labels.method} ${v.labels.code}: ${v.value}`), [], 'no PATCH or DELETE at all');
    assert.deepEqual([...(await snapshot())], [...was], 'every object as it was: no update, no new Event');
    const rs = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: NAME })) as RecognitionService;
    assert.match(degraded(rs)?.message ?? '', /limits\.memory \(field manager "someone"\)/, 'the conflict still reported');
  });
});
