/**
 * `kubectl scale recsvc` on the simulated cluster (the real kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok's fake kubelets; see ./cluster.test.ts): the real kubectl binary
 * through the CRD's scale subresource, the operator turning it into the API Deployment's
 * count (or the HPA's floor), and the scale subresource reporting ready pods and the selector.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, AutoscalingV2Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { RecognitionOperator } from '../../../src/operator/operator.js';
import type { RecognitionService } from '../../../src/operator/api/types.js';
import { FIELD_MANAGER } from '../../../src/operator/desired/naming.js';
import { addFakeNodes, eventually, fakeNode, findClusterTools, installCrds, startCluster, startControllers, type TestCluster } from '../helpers/cluster.js';

type Any = any;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const NS = 'scale';
const API_SELECTOR = 'app.kubernetes.io/component=api,app.kubernetes.io/instance=vision,app.kubernetes.io/name=recognition-service';
const run = promisify(execFile);

const found = findClusterTools();
const missing = found.tools && !found.tools.kubectl ? 'kubectl not installed: run scripts/k8s-tools.sh install' : found.missing;
// CI installs every tool: there, a missing kubectl is a failure, not a reason to skip.
if (found.tools && !found.tools.kubectl && process.env.CI === 'true') throw new Error(missing);
const tools = found.tools?.kubectl ? found.tools : undefined;
if (!tools) console.log(`# kubectl scale e2e skipped: ${missing}`);

interface Scale {
  spec: { replicas?: number };
  status: { replicas?: number; selector?: string };
}

describe('kubectl scale recsvc on a simulated cluster', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let controllers: { stop(): Promise<void> } | undefined;
  let operator: RecognitionOperator | undefined;
  let custom: CustomObjectsApi;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let kubeconfig: string;

  const kubectl = async (...args: string[]) => (await run(tools!.kubectl!, ['--kubeconfig', kubeconfig, '-n', NS, ...args], { encoding: 'utf8' })).stdout;
  const scaleTo = (n: number) => kubectl('scale', 'recsvc', 'vision', `--replicas=${n}`);
  const getScale = async (): Promise<Scale> => JSON.parse(await kubectl('get', 'recsvc', 'vision', '--subresource=scale', '-o', 'json'));
  const getRs = async () => (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' })) as RecognitionService;
  const apiReplicas = async () => (await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS })).spec?.replicas;
  const deploymentAt = (n: number) => eventually(async () => ((await apiReplicas()) === n ? true : undefined), `vision-api at ${n} replicas`, 90_000);
  /** The scale subresource once it reports n ready pods: the operator's status followed the Deployment's. */
  const scaleReports = (n: number) =>
    eventually(async () => {
      const s = await getScale();
      return s.spec.replicas !== undefined && s.status.replicas === n ? s : undefined;
    }, `the scale subresource reporting ${n} ready API pods`, 90_000);
  const apiPods = async (selector: string) =>
    (await core.listNamespacedPod({ namespace: NS, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp);

  before(async () => {
    cluster = await startCluster(tools!);
    try {
      controllers = await startControllers(cluster, tools!, path.join(ROOT, 'test/operator/e2e/kwok-stages.yaml'));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    kubeconfig = cluster.kubeConfigFile();
    const kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    apps = kc.makeApiClient(AppsV1Api);
    core = kc.makeApiClient(CoreV1Api);
    await installCrds(kc);
    for (const name of [NS, 'recognition-system']) await core.createNamespace({ body: { metadata: { name } } });
    await addFakeNodes(kc, [fakeNode('cpu-0', {}), fakeNode('cpu-1', {})]);

    operator = new RecognitionOperator({
      kubeConfig: kc,
      leaseNamespace: 'recognition-system',
      identity: 'scale-e2e',
      leaseTiming: { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 500 },
      backoff: { baseDelayMs: 200, maxDelayMs: 3_000 },
      resyncPeriodMs: 30_000,
    });
    await operator.start();
    await eventually(async () => (operator!.isLeader ? true : undefined), 'operator leads');

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
            imageUrlSecretRef: { name: 'vision-secrets' },
            imageStorage: { s3: { bucket: 'vision-images' } },
            replicas: { min: 2, max: 6 },
          },
          triton: { storageUri: 's3://recognition-models/triton', gpus: 0 },
          autoscaling: { enabled: false },
        },
      },
    });
    await scaleReports(2);
  });

  after(async () => {
    await operator?.stop();
    await controllers?.stop();
    await cluster?.stop();
  });

  test('kubectl scale --replicas=3 sets the API count: the Deployment and its pods follow; the scale subresource reports them and their selector', async () => {
    assert.match(await scaleTo(3), /^recognitionservice\.cv\.recognition\.io\/vision scaled$/m);
    assert.deepEqual((await getRs()).spec.api.replicas, { min: 3, max: 6 }, 'kubectl scale wrote api.replicas.min');
    await deploymentAt(3);
    const scale = await scaleReports(3);
    assert.equal(scale.spec.replicas, 3);
    assert.equal(scale.status.selector, API_SELECTOR);
    // What `kubectl scale` and an HPA aimed at the resource count: the API pods, and only them.
    const pods = await apiPods(scale.status.selector);
    assert.equal(pods.length, 3);
    for (const p of pods) assert.equal(p.metadata?.labels?.['app.kubernetes.io/component'], 'api');
  });

  test('kubectl scale above api.replicas.max is refused by the CRD\'s rule; nothing changes', async () => {
    await assert.rejects(scaleTo(7), (err: Any) => {
      assert.match(String(err.stderr), /api\.replicas\.min must be <= api\.replicas\.max \(kubectl scale sets api\.replicas\.min/);
      return true;
    });
    assert.deepEqual((await getRs()).spec.api.replicas, { min: 3, max: 6 });
    assert.equal((await getScale()).spec.replicas, 3);
  });

  test('with an HPA, kubectl scale moves its floor and the HPA controller, not the operator, scales the Deployment', async () => {
    await custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: NS, name: 'vision', body: { spec: { autoscaling: { enabled: true } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const hpas = cluster.kubeConfig().makeApiClient(AutoscalingV2Api);
    const hpaMin = (n: number) =>
      eventually(async () => {
        const h = await hpas.readNamespacedHorizontalPodAutoscaler({ name: 'vision-api', namespace: NS }).catch(() => undefined);
        return h?.spec?.minReplicas === n ? h : undefined;
      }, `the API HPA with minReplicas ${n}`, 60_000);
    await hpaMin(3);
    assert.match(await scaleTo(4), /vision scaled/);
    await hpaMin(4);
    // 3 running pods under a floor of 4: the HPA controller lifts the Deployment without metrics.
    await deploymentAt(4);
    const scale = await scaleReports(4);
    assert.equal(scale.spec.replicas, 4);
    const dep = await apps.readNamespacedDeployment({ name: 'vision-api', namespace: NS });
    const owners = (dep.metadata?.managedFields ?? [])
      .filter((f) => f.subresource !== 'status' && JSON.stringify(f.fieldsV1 ?? {}).includes('"f:replicas"'))
      .map((f) => f.manager);
    assert.ok(!owners.includes(FIELD_MANAGER), `spec.replicas is not the operator's next to an HPA: ${owners.join(',')}`);
  });
});
