/** The reconciler's pure helpers: when a live child already is what the operator applies. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contains, controlledBy, desiredHash, quantity } from '../../src/operator/controllers/recognitionservice-reconciler.js';
import { desiredState } from '../../src/operator/desired/index.js';
import { sampleResource } from './fixtures.js';

test('quantities compare by value, as the API server rewrites them', () => {
  assert.equal(quantity('20000'), quantity('20k'));
  assert.equal(quantity('1Gi'), 1024 ** 3);
  assert.equal(quantity('500m'), 0.5);
  assert.equal(quantity('1e3'), 1000);
  assert.equal(quantity('http'), undefined);
  assert.ok(contains({ target: { averageValue: '20k' } }, { target: { averageValue: '20000' } }));
  assert.ok(!contains({ target: { averageValue: '20k' } }, { target: { averageValue: '2000' } }));
});

test('contains: every desired field equal in the live object; server defaults and renamed members allowed', () => {
  const live = { spec: { ports: [{ port: 8000, protocol: 'TCP', targetPort: 'http' }], clusterIP: '10.0.0.1' }, metadata: { uid: 'x' } };
  assert.ok(contains(live, { spec: { ports: [{ port: 8000, targetPort: 'http' }] } }));
  assert.ok(!contains(live, { spec: { ports: [{ port: 8001, targetPort: 'http' }] } }), 'a changed value');
  assert.ok(!contains(live, { spec: { ports: [{ port: 8000 }, { port: 8001 }] } }), 'a list of another length');
  assert.ok(contains({ spec: { ingress: [{ _from: [{ a: 1 }] }] } }, { spec: { ingress: [{ from: [{ a: 1 }] }] } }), "client-node's _from");
  assert.ok(!contains({ spec: {} }, { spec: { replicas: 2 } }), 'a missing field');
});

test('desiredHash changes with the desired object; controlledBy needs the resource uid', () => {
  const rs = sampleResource();
  const [a] = desiredState(rs, { serviceMonitor: false }).apply;
  const [b] = desiredState(sampleResource({ networkPolicy: { enabled: false } }), { serviceMonitor: false }).apply;
  assert.equal(desiredHash(a), desiredHash(b), 'same child, same hash');
  const changed = desiredState({ ...rs, spec: { ...rs.spec, triton: { ...rs.spec.triton, gpus: 2 } } }, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment')!;
  const before = desiredState(rs, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment')!;
  assert.notEqual(desiredHash(changed), desiredHash(before));
  assert.ok(controlledBy(a, rs));
  assert.ok(!controlledBy({ metadata: { ownerReferences: [{ ...a.metadata.ownerReferences![0], uid: 'other' }] } }, rs));
  assert.ok(!controlledBy({ metadata: {} }, rs));
});

test('the cluster domain reaches TRITON_URL', () => {
  const dep = desiredState(sampleResource(), { serviceMonitor: false }, { clusterDomain: 'corp.internal' }).apply.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vision-api')!;
  const env = (dep.spec as any).template.spec.containers[0].env as Array<{ name: string; value?: string }>;
  assert.equal(env.find((e) => e.name === 'TRITON_URL')?.value, 'dns:///vision-triton.prod.svc.corp.internal:8001');
});
