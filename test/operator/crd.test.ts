/**
 * The CRD's scale subresource (`kubectl scale recsvc`, an HPA aimed at the resource): its
 * paths as the committed YAML carries them, the schema fields they name, and the status
 * the operator computes filling them in.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { CRD_FILES } from '../../tools/generate/render.js';
import { computeStatus, rolloutStatus } from '../../src/operator/status.js';
import { desiredState } from '../../src/operator/desired/index.js';
import { sampleResource } from './fixtures.js';
import { findTools, installCrds, startCluster, type TestCluster } from './helpers/cluster.js';

type Any = any; // the CRD and the manifests are plain JSON

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const version = (file: string): Any => parse(fs.readFileSync(path.join(ROOT, file), 'utf8')).spec.versions[0];

/** The schema of the field a `.a.b.c` path names (the scale subresource allows no array steps). */
function schemaAt(root: Any, jsonPath: string): Any {
  return jsonPath.slice(1).split('.').reduce((s: Any, key) => s?.properties?.[key], root);
}
const valueAt = (obj: Any, jsonPath: string): Any => jsonPath.slice(1).split('.').reduce((o: Any, key) => o?.[key], obj);

test('the committed CRD (and the chart copy) has a scale subresource on the API replica count', () => {
  for (const file of CRD_FILES) {
    assert.deepEqual(
      version(file).subresources,
      {
        status: {},
        scale: { specReplicasPath: '.spec.api.replicas.min', statusReplicasPath: '.status.api.readyReplicas', labelSelectorPath: '.status.api.selector' },
      },
      file,
    );
  }
});

test('the scale paths name an integer spec field, an integer status field and a string selector', () => {
  const v = version(CRD_FILES[0]);
  const { specReplicasPath, statusReplicasPath, labelSelectorPath } = v.subresources.scale;
  const schema = v.schema.openAPIV3Schema;
  assert.match(specReplicasPath, /^\.spec\.[a-z.]+$/i);
  assert.match(statusReplicasPath, /^\.status\.[a-z.]+$/i);
  assert.match(labelSelectorPath, /^\.status\.[a-z.]+$/i);
  const spec = schemaAt(schema, specReplicasPath);
  assert.equal(spec?.type, 'integer');
  assert.equal(spec.minimum, 1, 'no scale to zero');
  assert.ok(spec.default !== undefined, 'always set, so GET of the scale subresource never fails');
  assert.equal(schemaAt(schema, statusReplicasPath)?.type, 'integer');
  assert.equal(schemaAt(schema, labelSelectorPath)?.type, 'string');
});

test("the operator's status fills them: ready API pods and the API Deployment's selector as a string", () => {
  const rs = sampleResource();
  const v = version(CRD_FILES[0]);
  const { specReplicasPath, statusReplicasPath, labelSelectorPath } = v.subresources.scale;
  const observed = (replicas: number, ready: number) => ({
    metadata: { name: 'x', generation: 1 },
    spec: { replicas },
    status: { observedGeneration: 1, replicas, readyReplicas: ready, updatedReplicas: replicas, availableReplicas: ready },
  });
  rs.spec.api.replicas = { min: 3, max: 6 };
  rs.status = computeStatus(rs, { api: observed(3, 2), triton: observed(1, 1), pods: { api: [], triton: [] } }, new Date());
  assert.equal(valueAt(rs, specReplicasPath), 3);
  assert.equal(valueAt(rs, statusReplicasPath), 2, 'the API pods ready now, not the desired count');
  const selector: string = valueAt(rs, labelSelectorPath);
  assert.equal(selector, 'app.kubernetes.io/component=api,app.kubernetes.io/instance=vision,app.kubernetes.io/name=recognition-service');
  const dep: Any = desiredState(rs, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vision-api');
  assert.deepEqual(Object.fromEntries(selector.split(',').map((kv) => kv.split('='))), dep.spec.selector.matchLabels, "exactly the API Deployment's selector");
  assert.notEqual(rs.status.triton?.selector, selector, "Triton's pods are not the API's");
});

test('status.rollout follows the spec: Stable, then Canary with its weight (0 included), Stable again on promotion or abort', () => {
  const rs = sampleResource();
  assert.deepEqual(rolloutStatus(rs), { phase: 'Stable', stable: { name: 'centernet', version: '' }, canaryWeight: 0 });
  rs.spec.triton.modelVersion = '3';
  rs.spec.canary = { modelVersion: '4', weight: 0 };
  assert.deepEqual(rolloutStatus(rs), {
    phase: 'Canary',
    stable: { name: 'centernet', version: '3' },
    canary: { name: 'centernet', version: '4' },
    canaryWeight: 0,
  }, 'weight 0: a warm canary answering nothing is still a canary');
  rs.spec.canary = { modelName: 'centernet-v2', weight: 40 };
  assert.deepEqual(rolloutStatus(rs).canary, { name: 'centernet-v2', version: '' });
  assert.equal(rolloutStatus(rs).canaryWeight, 40);
  // Written with the rest of the status.
  const status = computeStatus(rs, { pods: { api: [], triton: [] } }, new Date());
  assert.deepEqual(status.rollout, rolloutStatus(rs));
  // Promotion: the canary becomes the stable model and spec.canary goes.
  rs.spec.triton.modelName = 'centernet-v2';
  rs.spec.triton.modelVersion = '';
  delete rs.spec.canary;
  assert.deepEqual(rolloutStatus(rs), { phase: 'Stable', stable: { name: 'centernet-v2', version: '' }, canaryWeight: 0 });
});

const { tools, missing } = findTools();
if (!tools) console.log(`# CRD validation tests skipped: ${missing}`);

describe('model versions and canary: the CRD as a real kube-apiserver enforces it', { skip: !tools && missing }, () => {
  const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
  const NS = 'canary';
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  let cluster: TestCluster;
  let kc: KubeConfig;
  let custom: CustomObjectsApi;

  const sample = (name: string): Any => {
    const o = parse(fs.readFileSync(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'), 'utf8'));
    o.metadata.name = name;
    return o;
  };
  const messageOf = (err: Any): string => {
    assert.equal(err.code, 422, String(err.body));
    return (typeof err.body === 'string' ? JSON.parse(err.body) : err.body).message;
  };
  const refusedCreate = async (name: string, mutate: (o: Any) => void, message: RegExp) => {
    const o = sample(name);
    mutate(o);
    await assert.rejects(custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o }), (err: Any) => {
      assert.match(messageOf(err), message);
      return true;
    });
  };
  const patch = (name: string, body: Any): Promise<Any> => custom.patchNamespacedCustomObject({ ...GROUP, namespace: NS, name, body }, merge);
  const refusedPatch = async (name: string, body: Any, message: RegExp) =>
    assert.rejects(patch(name, body), (err: Any) => {
      assert.match(messageOf(err), message);
      return true;
    });

  before(async () => {
    cluster = await startCluster(tools!);
    kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    await installCrds(kc);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
  });
  after(async () => {
    await cluster?.stop();
  });

  test('modelVersion defaults to latest; bad versions, weights and a canary equal to stable are refused', async () => {
    const created: Any = await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: sample('defaults') });
    assert.equal(created.spec.triton.modelVersion, '', "'' (Triton's latest) by default");
    assert.equal(created.spec.canary, undefined, 'no canary by default');

    for (const bad of ['v2', '01', '0', '1.2', ' 3']) {
      await refusedCreate('bad-version', (o) => (o.spec.triton.modelVersion = bad), /spec.triton.modelVersion/);
      await refusedCreate('bad-version', (o) => (o.spec.canary = { modelVersion: bad, weight: 5 }), /spec.canary.modelVersion/);
    }
    await refusedCreate('bad-weight', (o) => (o.spec.canary = { modelVersion: '2', weight: 101 }), /spec.canary.weight: Invalid value: 101: spec.canary.weight in body should be less than or equal to 100/);
    await refusedCreate('bad-weight', (o) => (o.spec.canary = { modelVersion: '2', weight: -1 }), /spec.canary.weight.*greater than or equal to 0/);
    await refusedCreate('bad-weight', (o) => (o.spec.canary = { modelVersion: '2' }), /spec.canary.weight: Required value/);
    // Under analysis the weight is where the canary starts: some traffic, and no more than the analysis ever gives it.
    const STARTS = /with analysis, weight is the weight the canary starts at: from 1 to analysis.maxWeight/;
    const analysed = (weight: number, analysis: object) => (o: Any) => ((o.spec.triton.modelVersion = '1'), (o.spec.canary = { modelVersion: '2', weight, analysis }));
    await refusedCreate('analysed', analysed(0, {}), STARTS);
    await refusedCreate('analysed', analysed(60, {}), STARTS);
    await refusedCreate('analysed', analysed(10, { maxWeight: 100 }), /spec.canary.analysis.maxWeight.*less than or equal to 99/);
    const ok = sample('analysed');
    analysed(50, { intervalSeconds: 30 })(ok);
    const withAnalysis: Any = await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: ok });
    assert.equal(withAnalysis.spec.canary.analysis.maxWeight, 50, 'defaults filled in by the API server');
    assert.equal(withAnalysis.spec.canary.analysis.windowSeconds, undefined, 'no window: the interval');
    await refusedCreate('bad-name', (o) => (o.spec.canary = { modelName: 'a/b', weight: 5 }), /spec.canary.modelName/);

    const SAME = /canary must differ from the stable model \(triton.modelName\/modelVersion\) in modelName or modelVersion/;
    await refusedCreate('same', (o) => (o.spec.canary = { weight: 10 }), SAME);
    await refusedCreate('same', (o) => (o.spec.canary = { modelName: 'centernet', modelVersion: '', weight: 10 }), SAME);
    await refusedCreate('same', (o) => ((o.spec.triton.modelVersion = '3'), (o.spec.canary = { modelVersion: '3', weight: 10 })), SAME);
    await refusedCreate('same', (o) => ((o.spec.triton.modelName = 'shop'), (o.spec.canary = { modelName: 'shop', weight: 10 })), SAME);
  });

  test("a canary of the same model needs a stable version: with '' the newest loaded, possibly the canary, would be stable", async () => {
    const NEEDS_VERSION = /a canary of the same model needs triton.modelVersion/;
    await refusedCreate('unpinned', (o) => (o.spec.canary = { modelVersion: '2', weight: 10 }), NEEDS_VERSION);
    await refusedCreate('unpinned', (o) => (o.spec.canary = { modelName: 'centernet', modelVersion: '2', weight: 0 }), NEEDS_VERSION);
    const o = sample('unpinned');
    o.spec.triton.modelVersion = '1';
    o.spec.canary = { modelVersion: '2', weight: 10 };
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o });
    // Unpinning the stable model while its canary runs is refused too.
    await refusedPatch('unpinned', { spec: { triton: { modelVersion: '' } } }, NEEDS_VERSION);
  });

  test('a canary of another model must be listed in triton.models in explicit mode, so Triton never restarts for it', async () => {
    const UNLISTED = /a canary of another model must be listed in triton.models/;
    await refusedCreate('listed', (o) => (o.spec.canary = { modelName: 'centernet-v2', weight: 10 }), UNLISTED);
    await refusedCreate('listed', (o) => ((o.spec.triton.models = ['centernet']), (o.spec.canary = { modelName: 'centernet-v2', weight: 10 })), UNLISTED);
    const o = sample('listed');
    o.spec.triton.models = ['centernet', 'centernet-v2'];
    o.spec.canary = { modelName: 'centernet-v2', weight: 10 };
    const created: Any = await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o });
    assert.equal(created.spec.canary.modelName, 'centernet-v2', 'another model needs no stable version');
    // Dropping it from the list while its canary runs is refused; poll and none load every model.
    await refusedPatch('listed', { spec: { triton: { models: ['centernet'] } } }, UNLISTED);
    const polled = sample('polled');
    polled.spec.triton.modelControlMode = 'poll';
    polled.spec.canary = { modelName: 'centernet-v2', weight: 10 };
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: polled });
  });

  test('the accurate profile: its models listed in explicit mode, no canary beside it, bad model names refused', async () => {
    const UNLISTED = /list every model of api.ensembleModels \(default ssdlite\) in triton.models/;
    await refusedCreate('accurate', (o) => (o.spec.api.detectionProfile = 'accurate'), UNLISTED);
    await refusedCreate('accurate', (o) => ((o.spec.api.detectionProfile = 'accurate'), (o.spec.triton.models = ['centernet'])), UNLISTED);
    await refusedCreate('accurate', (o) => ((o.spec.api.detectionProfile = 'accurate'), (o.spec.api.ensembleModels = ['yolox']), (o.spec.triton.models = ['centernet', 'ssdlite'])), UNLISTED);
    await refusedCreate('accurate', (o) => ((o.spec.api.detectionProfile = 'best')), /Unsupported value: "best"/);
    await refusedCreate('accurate', (o) => ((o.spec.api.ensembleModels = ['../x'])), /ensembleModels/);
    await refusedCreate('accurate', (o) => ((o.spec.api.ensembleModels = ['a', 'b', 'c', 'd'])), /ensembleModels/);
    const o = sample('accurate');
    o.spec.api.detectionProfile = 'accurate';
    o.spec.triton.models = ['centernet', 'ssdlite'];
    const created: Any = await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o });
    assert.equal(created.spec.api.detectionProfile, 'accurate');
    assert.equal(created.spec.api.ensembleModels, undefined, 'no default written: SSDLite is the API default');
    await refusedPatch('accurate', { spec: { triton: { models: ['centernet'] } } }, UNLISTED);
    await refusedPatch('accurate', { spec: { triton: { models: ['centernet', 'ssdlite', 'v2'] }, canary: { modelName: 'v2', weight: 10 } } }, /accurate cannot run with a canary/);
    // poll and none load every model in the repository.
    const polled = sample('accurate-polled');
    polled.spec.api.detectionProfile = 'accurate';
    polled.spec.triton.modelControlMode = 'poll';
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: polled });
  });

  test('a canary of another model with a ConfigMap catalog needs its key', async () => {
    const withMap = (o: Any) => {
      o.spec.triton.storageUri = 'gs://recognition-models/triton';
      delete o.spec.triton.storageSecretRef;
      o.spec.api.catalogConfigMapRef = { name: 'catalogs' };
      o.spec.triton.models = ['centernet', 'centernet-v2'];
    };
    await refusedCreate('map', (o) => (withMap(o), (o.spec.canary = { modelName: 'centernet-v2', weight: 10 })), /a canary of another model needs api.catalogConfigMapRef.canaryKey/);
    const o = sample('map');
    withMap(o);
    o.spec.triton.modelVersion = '1';
    o.spec.canary = { modelVersion: '2', weight: 10 };
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: o });
    await refusedPatch('map', { spec: { canary: { modelName: 'centernet-v2' } } }, /canaryKey/);
    await patch('map', { spec: { api: { catalogConfigMapRef: { canaryKey: 'v2.json' } }, canary: { modelName: 'centernet-v2' } } });
  });

  test('the manual rollouts of docs/operator.md: version, canary at 10%, raised, promoted; another model listed, its canary aborted, then promoted; status.rollout kept as written', async () => {
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body: sample('rollout') });
    let o = await patch('rollout', { spec: { triton: { modelVersion: '3' } } });
    assert.equal(o.spec.triton.modelVersion, '3');
    o = await patch('rollout', { spec: { canary: { modelVersion: '4', weight: 10 } } });
    assert.deepEqual(o.spec.canary, { modelVersion: '4', weight: 10 });
    o = await patch('rollout', { spec: { canary: { weight: 50 } } });
    assert.equal(o.spec.canary.weight, 50);
    // Promote: stable takes the canary's version and the canary goes, in one write.
    o = await patch('rollout', { spec: { triton: { modelVersion: '4' }, canary: null } });
    assert.equal(o.spec.triton.modelVersion, '4');
    assert.equal(o.spec.canary, undefined);
    // Another model: listed in triton.models first (Triton restarts once), then its canary.
    await patch('rollout', { spec: { triton: { models: ['centernet', 'centernet-v2'] } } });
    o = await patch('rollout', { spec: { canary: { modelName: 'centernet-v2', weight: 5 } } });
    assert.equal(o.spec.canary.modelName, 'centernet-v2');
    // Abort: removing spec.canary.
    o = await patch('rollout', { spec: { canary: null } });
    assert.equal(o.spec.canary, undefined);
    // Again, then promoted: stable takes the canary's name and version, the canary goes; the
    // list is untouched, and dropping the old model from it later is a separate, chosen restart.
    await patch('rollout', { spec: { canary: { modelName: 'centernet-v2', weight: 5 } } });
    o = await patch('rollout', { spec: { triton: { modelName: 'centernet-v2', modelVersion: '' }, canary: null } });
    assert.equal(o.spec.triton.modelName, 'centernet-v2');
    assert.deepEqual(o.spec.triton.models, ['centernet', 'centernet-v2']);
    o = await patch('rollout', { spec: { triton: { models: ['centernet-v2'] } } });
    assert.deepEqual(o.spec.triton.models, ['centernet-v2']);

    // The status the operator computes is kept whole by the status subresource (nothing pruned).
    o.spec.canary = { modelName: 'centernet', weight: 5 };
    const rollout = rolloutStatus(o);
    const written: Any = await custom.patchNamespacedCustomObjectStatus({ ...GROUP, namespace: NS, name: 'rollout', body: { status: { rollout } } }, merge);
    assert.deepEqual(written.status.rollout, rollout);
    await assert.rejects(
      custom.patchNamespacedCustomObjectStatus({ ...GROUP, namespace: NS, name: 'rollout', body: { status: { rollout: { ...rollout, phase: 'Promoting' } } } }, merge),
      (err: Any) => (assert.match(messageOf(err), /status.rollout.phase: Unsupported value: "Promoting"/), true),
    );
  });
});
