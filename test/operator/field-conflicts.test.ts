import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyConflicts, LEFT_TO_OTHERS_ANNOTATION, mustOwn, parseFieldPath, recordLeftTo, standingConflicts, withoutFields } from '../../src/operator/field-conflicts.js';
import { apiDeployment } from '../../src/operator/desired/api.js';
import type { KubeObject } from '../../src/operator/desired/index.js';
import { sampleResource } from './fixtures.js';

test('applyConflicts reads the fields and managers of a 409 from server-side apply', () => {
  // The Status body as kube-apiserver 1.34 sends it.
  const body = {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Conflict', code: 409,
    message: 'Apply failed with 2 conflicts: conflict with "someone": .spec.template.spec.containers[name="api"].resources.limits.memory\nconflict with "kubectl-edit" using apps/v1: .spec.template.spec.containers[name="api"].image',
    details: {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "someone"', field: '.spec.template.spec.containers[name="api"].resources.limits.memory' },
        { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using apps/v1 at 2026-11-24T12:00:00Z', field: '.spec.template.spec.containers[name="api"].image' },
      ],
    },
  };
  assert.deepEqual(applyConflicts({ code: 409, body: JSON.stringify(body) }), [
    { field: '.spec.template.spec.containers[name="api"].resources.limits.memory', manager: 'someone', detail: '' },
    { field: '.spec.template.spec.containers[name="api"].image', manager: 'kubectl-edit', detail: 'using apps/v1 at 2026-11-24T12:00:00Z' },
  ]);
  assert.equal(applyConflicts({ code: 409, body: { message: 'the object has been modified' } }), undefined, 'an optimistic-lock 409 is no field conflict');
  assert.equal(applyConflicts({ code: 422, body }), undefined);
});

test('must-own fields: what makes the child work; the rest may be left to another manager', () => {
  const c = '.spec.template.spec.containers[name="api"]';
  for (const f of [`${c}.image`, `${c}.env[name="TRITON_URL"].value`, `${c}.ports[containerPort=8080,protocol="TCP"]`, `${c}.readinessProbe.httpGet.path`,
    '.spec.selector', '.spec.template.metadata.labels.app.kubernetes.io/instance', '.spec.replicas', '.metadata.labels.app.kubernetes.io/component',
    `.spec.template.spec.containers[name="triton"].resources.limits.nvidia.com/gpu`, '.metadata.annotations.cv.recognition.io/desired-hash']) {
    assert.ok(mustOwn('Deployment', f), f);
  }
  for (const f of [`${c}.resources.limits.memory`, `${c}.imagePullPolicy`, '.spec.template.spec.terminationGracePeriodSeconds', '.spec.template.metadata.annotations.prometheus.io/port', '.spec.strategy.rollingUpdate.maxSurge', `${c}.imageStorage`]) {
    assert.ok(!mustOwn('Deployment', f), f);
  }
  assert.ok(mustOwn('Service', '.spec.ports[port=8080,protocol="TCP"].targetPort'));
  assert.ok(!mustOwn('Service', '.spec.type'));
  assert.ok(mustOwn('HorizontalPodAutoscaler', '.spec.minReplicas'));
  assert.ok(!mustOwn('HorizontalPodAutoscaler', '.spec.metrics'));
  assert.ok(mustOwn('NetworkPolicy', '.spec.ingress'));
});

test('field paths are parsed against the object: dotted map keys, keyed and set lists', () => {
  const obj = {
    metadata: { labels: { 'app.kubernetes.io/name': 'x', app: 'y' } },
    spec: { ports: [{ port: 8080, protocol: 'TCP', name: 'http' }, { port: 9464, protocol: 'TCP' }], finalizers: ['a', 'b'] },
  };
  assert.deepEqual(parseFieldPath('.metadata.labels.app.kubernetes.io/name', obj), [{ field: 'metadata' }, { field: 'labels' }, { field: 'app.kubernetes.io/name' }]);
  assert.deepEqual(parseFieldPath('.metadata.labels.app', obj), [{ field: 'metadata' }, { field: 'labels' }, { field: 'app' }]);
  assert.deepEqual(parseFieldPath('.spec.ports[port=9464,protocol="TCP"]', obj)?.[2], { key: { port: 9464, protocol: 'TCP' } });
  assert.deepEqual(parseFieldPath('.spec.finalizers[="b"]', obj)?.[2], { value: 'b' });
  assert.equal(parseFieldPath('.spec.ports[port=1,protocol="TCP"]', obj), undefined);
  assert.equal(parseFieldPath('.spec.nothing', obj), undefined);
});

test('withoutFields drops the conflicting fields and the maps they leave empty, nothing else', () => {
  const dep = apiDeployment(sampleResource());
  const c = '.spec.template.spec.containers[name="api"]';
  const out = withoutFields(dep, [`${c}.resources.limits.memory`, '.spec.template.spec.terminationGracePeriodSeconds']) as KubeObject & { spec: any };
  const container = out.spec.template.spec.containers[0];
  assert.equal(container.resources.limits, undefined, 'limits had only memory: the empty map goes');
  assert.deepEqual(container.resources.requests, { cpu: '500m', memory: '512Mi' });
  assert.equal(out.spec.template.spec.terminationGracePeriodSeconds, undefined);
  assert.equal(container.image, 'registry.example/recognition-service:1.2.3');
  assert.equal((dep.spec as any).template.spec.containers[0].resources.limits.memory, '1Gi', 'the input is not changed');
  const noEnv = withoutFields(dep, [`${c}.env[name="LOG_LEVEL"]`]) as any;
  assert.equal(noEnv.spec.template.spec.containers[0].env.length, (dep.spec as any).template.spec.containers[0].env.length - 1);
});

test('a conflict recorded on the child stands while each field is still held by the manager it was left to', () => {
  const dep = apiDeployment(sampleResource());
  const memory = '.spec.template.spec.containers[name="api"].resources.limits.memory';
  const applied = recordLeftTo(withoutFields(dep, [memory]), [{ field: memory, manager: 'someone', detail: 'using apps/v1' }]);
  const annotations = applied.metadata.annotations!;
  assert.deepEqual(JSON.parse(annotations[LEFT_TO_OTHERS_ANNOTATION]), [{ field: memory, manager: 'someone' }]);
  assert.equal(recordLeftTo(applied, []).metadata.annotations?.[LEFT_TO_OTHERS_ANNOTATION], undefined, 'nothing left: no annotation');
  // managedFields as the API server writes them: structured-merge-diff's f: and k: keys.
  const held = (manager: string) => ({
    manager, operation: 'Apply',
    fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"api"}': { '.': {}, 'f:resources': { 'f:limits': { 'f:memory': {} } } } } } } } },
  });
  const live = (...managedFields: unknown[]) => ({ metadata: { annotations, managedFields: managedFields as never } });
  assert.deepEqual(standingConflicts(live(held('someone')), dep), [{ field: memory, manager: 'someone', detail: '' }]);
  assert.equal(standingConflicts(live(), dep), undefined, 'dropped by its manager');
  assert.equal(standingConflicts(live(held('someone-else')), dep), undefined, 'taken by another manager');
  assert.equal(standingConflicts(live({ ...held('someone'), subresource: 'status' }), dep), undefined, 'a status write holds no spec field');
  assert.equal(standingConflicts({ metadata: { managedFields: [held('someone')] } }, dep), undefined, 'none recorded');
});
