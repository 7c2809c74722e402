/**
 * Which model versions the operator keeps loaded on Triton (desired/versions.ts), the way into
 * Triton's pods it opens for that (the NetworkPolicy, --operator-pod-labels), and when the API
 * pods are all on the spec's settings (apiSettled). The loading itself, on a real Triton:
 * e2e/triton-versions.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { askedVersions, gatesReadiness, liveStable, managesTriton, servedVersions, versionsToLoad } from '../../src/operator/desired/versions.js';
import { tritonNetworkPolicy } from '../../src/operator/desired/policies.js';
import { apiSettled, DESIRED_HASH_ANNOTATION, gateOf } from '../../src/operator/controllers/recognitionservice-reconciler.js';
import { operatorPeer } from '../../src/cli/commands/operator.js';
import type { ObservedDeployment, ObservedPod } from '../../src/operator/status.js';
import { sampleResource } from './fixtures.js';

type Any = any;

function resource(triton: Record<string, unknown>, canary?: Record<string, unknown>) {
  const rs = sampleResource();
  Object.assign(rs.spec.triton, triton);
  if (canary) rs.spec.canary = canary as Any;
  return rs;
}

test('the versions kept loaded: each pinned model of the rollout, in explicit mode only', () => {
  const served = (rs: ReturnType<typeof resource>) => Object.fromEntries(servedVersions(rs));
  // Nothing pinned: config.pbtxt's version_policy decides, as before.
  assert.deepEqual(served(resource({})), {});
  assert.equal(gatesReadiness(resource({})), false);
  // The stable version alone, then with a canary of another version: both, in order.
  assert.deepEqual(served(resource({ modelVersion: '3' })), { centernet: ['3'] });
  assert.deepEqual(served(resource({ modelVersion: '10' }, { modelVersion: '9', weight: 10 })), { centernet: ['9', '10'] });
  assert.equal(gatesReadiness(resource({ modelVersion: '3' })), true);
  // A canary version left to "the newest loaded": no policy says "3 and the newest", so the
  // model is left alone; the gate stays (the stable version alone decides it, so no canary
  // ever changes Triton's pod template).
  assert.deepEqual(served(resource({ modelVersion: '3' }, { weight: 10 })), {});
  assert.equal(gatesReadiness(resource({ modelVersion: '3' }, { weight: 10 })), true);
  assert.equal(managesTriton(resource({ modelVersion: '3' }, { weight: 10 })), true);
  // A canary of another model: each model its own versions; an unpinned one is left alone.
  const other = { modelVersion: '3', models: ['centernet', 'ssdlite'] };
  assert.deepEqual(served(resource(other, { modelName: 'ssdlite', modelVersion: '2', weight: 10 })), { centernet: ['3'], ssdlite: ['2'] });
  assert.deepEqual(served(resource(other, { modelName: 'ssdlite', weight: 10 })), { centernet: ['3'] });
  assert.deepEqual(served(resource({ models: ['centernet', 'ssdlite'] }, { modelName: 'ssdlite', modelVersion: '2', weight: 10 })), { ssdlite: ['2'] });
  assert.equal(gatesReadiness(resource({ models: ['centernet', 'ssdlite'] }, { modelName: 'ssdlite', modelVersion: '2', weight: 10 })), false, 'the stable side is not pinned: no gate');
  // poll and none: Triton's repository decides; its load API is off or would be undone.
  for (const mode of ['poll', 'none']) {
    assert.deepEqual(served(resource({ modelVersion: '3', modelControlMode: mode })), {}, mode);
    assert.equal(managesTriton(resource({ modelVersion: '3', modelControlMode: mode })), false, mode);
  }
  assert.equal(managesTriton(resource({})), false);
});

test('what one pod loads next: added at once, dropped only once the API pods are settled', () => {
  assert.equal(versionsToLoad(['3'], ['3'], true), undefined, 'already so');
  assert.equal(versionsToLoad(['3', '4'], ['4', '3'], false), undefined, 'order does not matter');
  // A canary of 4 next to 3: added, whatever the API pods run.
  assert.deepEqual(versionsToLoad(['3'], ['3', '4'], false), ['3', '4']);
  assert.deepEqual(versionsToLoad(['3'], ['3', '4'], true), ['3', '4']);
  // Promoted for good (stable 4, no canary): 3 stays while an API pod may still ask for it.
  assert.equal(versionsToLoad(['3', '4'], ['4'], false), undefined);
  assert.deepEqual(versionsToLoad(['3', '4'], ['4'], true), ['4']);
  // A pod started with config.pbtxt's newest (5) and the spec pinned to 3.
  assert.deepEqual(versionsToLoad(['5'], ['3'], false), ['3', '5']);
  assert.deepEqual(versionsToLoad(['5'], ['3'], true), ['3']);
  assert.deepEqual(versionsToLoad([], ['3'], false), ['3'], 'nothing loaded');
  assert.deepEqual(versionsToLoad(['2', '10'], ['9'], true), ['9']);
  assert.deepEqual(versionsToLoad(['10'], ['9'], false), ['9', '10'], 'numeric order');
});

test("Triton's NetworkPolicy lets the operator's pods reach the HTTP port only while it loads versions", () => {
  const peer = { namespace: 'recognition-system', labels: { 'app.kubernetes.io/name': 'recognition-operator', 'app.kubernetes.io/instance': 'rec' } };
  const ingress = (rs: ReturnType<typeof resource>, p?: typeof peer) => (tritonNetworkPolicy(rs, p)!.spec as Any).ingress as Any[];
  const pinned = resource({ modelVersion: '3' });
  const rule = ingress(pinned, peer).find((r) => r.from?.[0]?.namespaceSelector);
  assert.deepEqual(rule, {
    from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'recognition-system' } }, podSelector: { matchLabels: peer.labels } }],
    ports: [{ protocol: 'TCP', port: 8000 }],
  });
  // Nothing pinned, or the operator's labels unknown: the policy as before (API pods, scrapers).
  assert.deepEqual(ingress(resource({}), peer), ingress(resource({})));
  assert.deepEqual(ingress(pinned), ingress(resource({})));
  assert.equal(ingress(pinned).length, 2);
});

test('--operator-pod-labels: key=value pairs, the namespace the Lease is in', () => {
  assert.equal(operatorPeer({}, {}, 'ns'), undefined);
  assert.equal(operatorPeer({}, { OPERATOR_POD_LABELS: ' ' }, 'ns'), undefined);
  assert.deepEqual(operatorPeer({}, { OPERATOR_POD_LABELS: 'app.kubernetes.io/name=recognition-operator, app.kubernetes.io/instance=rec' }, 'ops'), {
    namespace: 'ops',
    labels: { 'app.kubernetes.io/name': 'recognition-operator', 'app.kubernetes.io/instance': 'rec' },
  });
  assert.deepEqual(operatorPeer({ operatorPodLabels: 'a=b' }, { OPERATOR_POD_LABELS: 'c=d' }, 'ops')?.labels, { a: 'b' }, 'the flag wins');
  for (const bad of ['a', 'a=b,', '=b', 'a=b c', 'a=b=c']) assert.throws(() => operatorPeer({ operatorPodLabels: bad }, {}, 'ns'), /--operator-pod-labels/, bad);
});

test('the API pods are settled on the spec once the Deployment carries its hash, is rolled out and none drains', () => {
  const dep = (over: { hash?: string; generation?: number; status?: ObservedDeployment['status']; replicas?: number } = {}): ObservedDeployment => ({
    metadata: { name: 'vision-api', generation: over.generation ?? 4, annotations: { [DESIRED_HASH_ANNOTATION]: over.hash ?? 'h1' } },
    spec: { replicas: over.replicas ?? 2 },
    status: over.status ?? { observedGeneration: 4, replicas: 2, updatedReplicas: 2, readyReplicas: 2 },
  });
  const pod = (draining = false): ObservedPod => ({ metadata: { name: 'p', ...(draining ? { deletionTimestamp: '2026-11-26T00:00:00Z' } : {}) } });
  assert.equal(apiSettled(dep(), 'h1', [pod(), pod()]), true);
  assert.equal(apiSettled(undefined, 'h1', []), false, 'no Deployment yet');
  assert.equal(apiSettled(dep({ hash: 'h0' }), 'h1', []), false, 'the new settings not applied yet');
  assert.equal(apiSettled(dep({ generation: 5 }), 'h1', []), false, 'not yet seen by the Deployment controller');
  assert.equal(apiSettled(dep({ status: { observedGeneration: 4, replicas: 3, updatedReplicas: 2 } }), 'h1', []), false, 'an old pod left');
  assert.equal(apiSettled(dep({ status: { observedGeneration: 4, replicas: 2, updatedReplicas: 1 } }), 'h1', []), false, 'not all updated');
  assert.equal(apiSettled(dep(), 'h1', [pod(), pod(true)]), false, 'a pod still draining');
});

test("a Triton pod's readiness gate: ready once the stable version is loaded, kept while it has what the API pods ask for", () => {
  const stable = { name: 'shop', version: '4' };
  const live = { name: 'shop', version: '3' };
  const pod = (gate?: 'True' | 'False'): ObservedPod => ({
    metadata: { name: 'vision-triton-0' },
    status: { conditions: gate ? [{ type: 'cv.recognition.io/versions-loaded', status: gate }] : [] },
  });
  const ready = (entries: Record<string, string[]>) => new Map(Object.entries(entries));
  assert.deepEqual(gateOf(pod(), stable, ready({ shop: ['3', '4'] }), live), { status: 'True', reason: 'VersionsLoaded', message: 'shop version 4 is loaded' });
  // A new pod with config.pbtxt's newest: not ready until 4 is there, whatever the API pods ask for.
  assert.deepEqual(gateOf(pod(), stable, ready({ shop: ['3'] }), live), { status: 'False', reason: 'StableVersionNotLoaded', message: 'shop version 4 is not loaded (loaded: 3)' });
  assert.equal(gateOf(pod('False'), stable, ready({ shop: ['3'] }), live).status, 'False');
  // A ready pod while 4 cannot be loaded anywhere: the running API pods still ask for 3, it stays.
  assert.deepEqual(gateOf(pod('True'), stable, ready({ shop: ['3'] }), live), {
    status: 'True',
    reason: 'PreviousVersionLoaded',
    message: 'shop version 4 is not loaded yet; shop version 3, which the API pods ask for, is',
  });
  // A new stable *model* that loads nowhere: the API pods still ask for the old model, which is there.
  assert.equal(gateOf(pod('True'), { name: 'shop-v2', version: '1' }, ready({ shop: ['3'] }), live).reason, 'PreviousVersionLoaded');
  // The model gone, or (after a container restart) only versions nobody asks for: out of the Service.
  assert.deepEqual(gateOf(pod('True'), stable, ready({}), live), { status: 'False', reason: 'StableVersionNotLoaded', message: 'shop version 4 is not loaded (no version of shop loaded)' });
  assert.equal(gateOf(pod('True'), stable, ready({ shop: ['5'] }), live).status, 'False');
  assert.equal(gateOf(pod('True'), stable, ready({ shop: ['3'] })).status, 'False', 'no running API pods to keep it for');
});

test('what the API pods of a spec ask for, and what the running ones do', () => {
  const asked = (rs: ReturnType<typeof resource>) => Object.fromEntries(askedVersions(rs));
  assert.deepEqual(asked(resource({ modelVersion: '3' })), { centernet: ['3'] });
  assert.deepEqual(asked(resource({ modelVersion: '3' }, { modelVersion: '4', weight: 10 })), { centernet: ['3', '4'] });
  // A canary at weight 0 (aborted by analysis, or by hand) takes no requests: never held back for it.
  assert.deepEqual(asked(resource({ modelVersion: '3' }, { modelVersion: '4', weight: 0 })), { centernet: ['3'] });
  assert.deepEqual(asked(resource({ modelVersion: '3' }, { weight: 10 })), {}, 'a model left to its config.pbtxt');
  const dep = (env: Array<{ name: string; value?: string }>): ObservedDeployment => ({ metadata: { name: 'vision-api' }, spec: { template: { spec: { containers: [{ name: 'api', env }] } } } });
  assert.deepEqual(liveStable(dep([{ name: 'TRITON_MODEL_NAME', value: 'shop' }, { name: 'TRITON_MODEL_VERSION', value: '3' }])), { name: 'shop', version: '3' });
  assert.deepEqual(liveStable(dep([{ name: 'TRITON_MODEL_NAME', value: 'shop' }])), { name: 'shop', version: '' });
  assert.equal(liveStable(dep([])), undefined);
  assert.equal(liveStable(undefined), undefined);
});
