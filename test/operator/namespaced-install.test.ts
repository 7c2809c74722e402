/**
 * The chart's namespaced install and its ValidatingAdmissionPolicy, on a real kube-apiserver
 * (issue 29): the operator runs as its ServiceAccount (impersonated) with exactly what the
 * chart grants for `watchNamespaces=[team-a]`, manages team-a and never looks at team-b; the
 * policy refuses that ServiceAccount any write to an object it does not manage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { RecognitionOperator } from '../../src/operator/operator.js';
import { toClientModel } from '../../src/operator/kube.js';
import type { RecognitionService } from '../../src/operator/api/types.js';
import { eventually, findTools, installCrds, startCluster, testOperator, type TestCluster } from './helpers/cluster.js';

type Any = any;
const parseYaml = (text: string): Any[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SAMPLE = path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const OP_NS = 'recognition-system';
const WATCHED = 'team-a';
const OTHER = 'team-b';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const { tools, missing } = findTools();
const skip = !tools ? missing : !tools.helm ? 'helm not installed (scripts/k8s-tools.sh install)' : false;

/** A kubeconfig that acts as `username` through the admin's impersonation right. */
function impersonating(cluster: TestCluster, username: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, skipTLSVerify: true }],
    users: [{ name: 'as', token: cluster.admin.token, impersonateUser: username }],
    contexts: [{ name: 'test', cluster: 'test', user: 'as', namespace: 'default' }],
    currentContext: 'test',
  });
  return kc;
}

async function refusal(p: Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: number; body?: unknown };
    const body = typeof e.body === 'string' ? (JSON.parse(e.body) as { message?: string }) : (e.body as { message?: string } | undefined);
    return { code: e.code, message: body?.message ?? String(err) };
  }
  assert.fail('the write was allowed');
}

const deployment = (namespace: string, name: string, metadata: Any = {}): Any => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace, ...metadata },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'example.invalid/c:1' }] } },
  },
});

describe('namespaced install and admission policy against a real kube-apiserver', { skip }, () => {
  let cluster: TestCluster;
  let admin: KubeConfig;
  let asOperator: KubeConfig;
  let rendered: Any[];
  let operator: RecognitionOperator | undefined;
  let owner: RecognitionService;

  before(async () => {
    cluster = await startCluster(tools!);
    admin = cluster.kubeConfig();
    const objects = KubernetesObjectApi.makeApiClient(admin);
    await installCrds(admin);
    const core = admin.makeApiClient(CoreV1Api);
    for (const name of [OP_NS, WATCHED, OTHER]) await core.createNamespace({ body: { metadata: { name } } });

    // Everything the chart renders but the CRD and the operator's own Deployment and Service.
    rendered = parseYaml(
      execFileSync(tools!.helm!, ['template', 'rec', path.join(ROOT, 'charts/recognition-operator'), '--namespace', OP_NS, '--set', `watchNamespaces={${WATCHED}}`], { encoding: 'utf8' }),
    );
    for (const doc of rendered.filter((d) => !['Deployment', 'Service'].includes(d.kind))) {
      doc.metadata.namespace ??= ['ServiceAccount'].includes(doc.kind) ? OP_NS : undefined;
      await objects.create(toClientModel(doc));
    }
    const sa = rendered.find((d) => d.kind === 'ServiceAccount');
    asOperator = impersonating(cluster, `system:serviceaccount:${OP_NS}:${sa.metadata.name}`);

    // The policy is enforced once the API server has compiled it: wait for the first refusal.
    const apps = asOperator.makeApiClient(AppsV1Api);
    await eventually(async () => {
      try {
        await apps.createNamespacedDeployment({ namespace: WATCHED, body: deployment(WATCHED, 'probe') });
      } catch (err) {
        return (err as { code?: number }).code === 403 && /may write only objects it manages/.test(String((err as { body?: unknown }).body)) ? true : undefined;
      }
      await admin.makeApiClient(AppsV1Api).deleteNamespacedDeployment({ name: 'probe', namespace: WATCHED });
      return undefined;
    }, 'the admission policy to be enforced');

    const sample = parseYaml(fs.readFileSync(SAMPLE, 'utf8'))[0];
    sample.metadata.namespace = WATCHED;
    // No key named: the operator creates the signing-key Secret itself (a Secret write the policy must allow).
    delete sample.spec.api.imageUrlSecretRef;
    owner = (await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ ...GROUP, namespace: WATCHED, body: sample })) as RecognitionService;
  });

  after(async () => {
    await operator?.stop();
    await cluster?.stop();
  });

  test('the chart: a Role and RoleBinding in each watched namespace, no ClusterRole; WATCH_NAMESPACES for the operator', () => {
    const kinds = rendered.map((d) => `${d.kind}${d.metadata.namespace ? ` ${d.metadata.namespace}` : ''}`).sort();
    assert.ok(!kinds.some((k) => k.startsWith('ClusterRole')), kinds.join(', '));
    assert.ok(kinds.includes(`Role ${WATCHED}`) && kinds.includes(`RoleBinding ${WATCHED}`), kinds.join(', '));
    const env = rendered.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].env;
    assert.deepEqual(env.find((e: Any) => e.name === 'WATCH_NAMESPACES'), { name: 'WATCH_NAMESPACES', value: WATCHED });
  });

  test("the policy refuses the operator's ServiceAccount an unlabelled Deployment", async () => {
    const apps = asOperator.makeApiClient(AppsV1Api);
    const r = await refusal(apps.createNamespacedDeployment({ namespace: WATCHED, body: deployment(WATCHED, 'not-ours') }));
    assert.equal(r.code, 403);
    assert.match(r.message, /ValidatingAdmissionPolicy .*managed-objects.* denied request: the recognition operator may write only objects it manages/);
    // Labelled but owned by nothing: refused too (the label alone is easy to copy).
    const labelled = deployment(WATCHED, 'labelled', { labels: { 'app.kubernetes.io/managed-by': 'recognition-operator' } });
    assert.equal((await refusal(apps.createNamespacedDeployment({ namespace: WATCHED, body: labelled }))).code, 403);
  });

  test("the policy refuses the operator's ServiceAccount changes and deletions of others' objects, and lets other users be", async () => {
    const adminApps = admin.makeApiClient(AppsV1Api);
    await adminApps.createNamespacedDeployment({ namespace: WATCHED, body: deployment(WATCHED, 'someone-elses') });
    const apps = asOperator.makeApiClient(AppsV1Api);
    // RBAC allows patch and delete in a watched namespace; the policy does not.
    const patch = { metadata: { labels: { 'app.kubernetes.io/managed-by': 'recognition-operator' } } };
    assert.equal((await refusal(apps.patchNamespacedDeployment({ name: 'someone-elses', namespace: WATCHED, body: patch }, merge))).code, 403, 'no take-over by labelling');
    assert.equal((await refusal(apps.deleteNamespacedDeployment({ name: 'someone-elses', namespace: WATCHED }))).code, 403);
    assert.ok(await adminApps.readNamespacedDeployment({ name: 'someone-elses', namespace: WATCHED }));
    // A Secret of someone else: RBAC already lets the operator only create; the policy refuses even that.
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'planted', namespace: WATCHED }, stringData: { k: 'v' } };
    assert.equal((await refusal(asOperator.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: WATCHED, body: secret }))).code, 403);
  });

  test("the policy lets the operator's ServiceAccount set only the versions gate, and only of Triton's pods", async () => {
    const adminCore = admin.makeApiClient(CoreV1Api);
    const core = asOperator.makeApiClient(CoreV1Api);
    const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
    const pod = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'registry.example/c:1' }] } });
    const tritonLabels = { 'app.kubernetes.io/managed-by': 'recognition-operator', 'app.kubernetes.io/component': 'triton', 'app.kubernetes.io/instance': 'vision' };
    await adminCore.createNamespacedPod({ namespace: WATCHED, body: pod('vision-triton-x', tritonLabels) });
    await adminCore.createNamespacedPod({ namespace: WATCHED, body: pod('someone-elses-pod', { app: 'web' }) });
    const condition = (type: string, status = 'True') => ({ status: { conditions: [{ type, status, reason: 'Test', message: 'm', lastTransitionTime: new Date().toISOString() }] } });
    const setStatus = (name: string, body: unknown) => core.patchNamespacedPodStatus({ name, namespace: WATCHED, body }, strategic);
    // RBAC grants pods/status patch in the whole namespace; the policy narrows it. Compiled on its own: wait for its first refusal.
    const first = await eventually(async () => {
      const r = await refusal(setStatus('someone-elses-pod', condition('cv.recognition.io/versions-loaded')));
      return r.code === 403 ? r : undefined;
    }, 'the pods/status policy to be enforced');
    assert.match(first.message, /may set the status only of the Triton pods it manages/);
    // The Triton pod: its gate, yes; its Ready condition or its phase, no.
    await setStatus('vision-triton-x', condition('cv.recognition.io/versions-loaded'));
    const live = await adminCore.readNamespacedPodStatus({ name: 'vision-triton-x', namespace: WATCHED });
    assert.equal(live.status?.conditions?.find((c) => c.type === 'cv.recognition.io/versions-loaded')?.status, 'True');
    const ready = await refusal(setStatus('vision-triton-x', condition('Ready')));
    assert.equal(ready.code, 403);
    assert.match(ready.message, /may change only the condition cv.recognition.io\/versions-loaded/);
    assert.equal((await refusal(setStatus('vision-triton-x', { status: { phase: 'Failed' } }))).code, 403);
    // Labels through pods/status: the pod would leave its ReplicaSet's selector.
    assert.equal((await refusal(setStatus('vision-triton-x', { metadata: { labels: { 'app.kubernetes.io/instance': 'other' } } }))).code, 403);
    // Other users are not the policy's concern.
    await adminCore.patchNamespacedPodStatus({ name: 'someone-elses-pod', namespace: WATCHED, body: condition('cv.recognition.io/versions-loaded') }, strategic);
  });

  test('outside its watched namespaces, the operator has no rights at all', async () => {
    const managed = deployment(OTHER, 'x', {
      labels: { 'app.kubernetes.io/managed-by': 'recognition-operator' },
      ownerReferences: [{ apiVersion: 'cv.recognition.io/v1alpha1', kind: 'RecognitionService', name: 'vision', uid: owner.metadata.uid, controller: true }],
    });
    const r = await refusal(asOperator.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: OTHER, body: managed }));
    assert.equal(r.code, 403);
    assert.match(r.message, /cannot create resource "deployments"/, 'refused by RBAC');
  });

  test('the operator, as its ServiceAccount with only the namespaced RBAC and under the policy, manages the watched namespace and ignores the other', async () => {
    const custom = admin.makeApiClient(CustomObjectsApi);
    const sample = parseYaml(fs.readFileSync(SAMPLE, 'utf8'))[0];
    sample.metadata.namespace = OTHER;
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: OTHER, body: sample });

    operator = testOperator(asOperator, {
      leaseNamespace: OP_NS,
      identity: 'namespaced',
      namespaces: [WATCHED],
      resyncPeriodMs: 60_000,
      health: { host: '127.0.0.1', port: 0 },
    });
    await operator.start();
    const apps = admin.makeApiClient(AppsV1Api);
    for (const name of ['vision-api', 'vision-triton']) {
      await eventually(async () => apps.readNamespacedDeployment({ name, namespace: WATCHED }), `${name} in ${WATCHED}`);
    }
    const core = admin.makeApiClient(CoreV1Api);
    await eventually(async () => core.readNamespacedSecret({ name: 'vision-api-image-url', namespace: WATCHED }), 'the signing-key Secret');
    await eventually(async () => {
      const rs = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: WATCHED, name: 'vision' })) as RecognitionService;
      return rs.status?.conditions?.length ? true : undefined;
    }, 'status written');
    // Every child the sample asks for (HPAs, PDBs, NetworkPolicy too) passed RBAC and the policy.
    const errors = (await operator.metrics.reconcileErrors.get()).values.map((v) => `${v.labels.reason}: ${v.value}`);
    assert.deepEqual(errors, [], 'no reconcile failed');
    // No informer failed for want of rights (a cluster-wide list would): the operator is ready.
    assert.equal((await fetch(`http://127.0.0.1:${operator.healthPort}/readyz`)).status, 200);
    assert.deepEqual((await apps.listNamespacedDeployment({ namespace: OTHER })).items.map((d) => d.metadata?.name), [], `nothing created in ${OTHER}`);
    const other = (await custom.getNamespacedCustomObject({ ...GROUP, namespace: OTHER, name: 'vision' })) as RecognitionService;
    assert.equal(other.status, undefined, `no status written in ${OTHER}`);
  });
});
