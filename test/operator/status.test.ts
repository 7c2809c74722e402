import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { computeStatus, restartsWithin, sameJson, type ObservedDeployment, type ObservedPod } from '../../src/operator/status.js';
import type { Condition } from '../../src/operator/api/types.js';
import { sampleResource } from './fixtures.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:05:00Z');

function deployment(name: string, replicas: number, s: Partial<NonNullable<ObservedDeployment['status']>>, generation = 1): ObservedDeployment {
  return { metadata: { name, generation }, spec: { replicas }, status: { observedGeneration: generation, ...s } };
}

const ready = (name: string, n: number) => deployment(name, n, { replicas: n, readyReplicas: n, updatedReplicas: n, availableReplicas: n });

function cond(conds: Condition[] | undefined, type: string): Condition {
  const c = conds?.find((x) => x.type === type);
  assert.ok(c, `condition ${type}`);
  return c;
}

function crashPod(name: string, component: string, reason = 'CrashLoopBackOff'): ObservedPod {
  return {
    metadata: { name, labels: { 'app.kubernetes.io/instance': 'vision', 'app.kubernetes.io/component': component } },
    status: {
      containerStatuses: [
        { name: component, ready: false, restartCount: 5, state: { waiting: { reason } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } },
      ],
    },
  };
}

describe('status', () => {
  test('no deployments yet: progressing, not ready, url and endpoints known', () => {
    const rs = sampleResource();
    const s = computeStatus(rs, { pods: { api: [], triton: [] } }, T0);
    assert.equal(s.observedGeneration, 3);
    assert.equal(s.url, 'http://vision-api.prod.svc:8080');
    assert.equal(s.triton?.endpoint, 'dns:///vision-triton.prod.svc.cluster.local:8001');
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.equal(cond(s.conditions, 'Progressing').status, 'True');
    assert.equal(cond(s.conditions, 'Degraded').status, 'False');
    for (const c of s.conditions ?? []) {
      assert.equal(c.lastTransitionTime, T0.toISOString());
      assert.equal(c.observedGeneration, 3);
    }
  });

  test('rollout under way, then complete: Progressing → Ready, transition times move only on change', () => {
    const rs = sampleResource();
    const rolling = computeStatus(rs, {
      api: deployment('vision-api', 2, { replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2 }),
      triton: ready('vision-triton', 1),
      pods: { api: [], triton: [] },
    }, T0);
    assert.equal(cond(rolling.conditions, 'ApiReady').status, 'False');
    assert.equal(cond(rolling.conditions, 'TritonReady').status, 'True');
    assert.equal(cond(rolling.conditions, 'Progressing').status, 'True');
    assert.match(cond(rolling.conditions, 'Progressing').message, /1 of 2 replicas updated/);
    assert.equal(rolling.api?.summary, '2/2');

    rs.status = rolling;
    const done = computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T1);
    assert.equal(cond(done.conditions, 'Ready').status, 'True');
    assert.equal(cond(done.conditions, 'Progressing').status, 'False');
    assert.equal(cond(done.conditions, 'Ready').lastTransitionTime, T1.toISOString());
    assert.equal(cond(done.conditions, 'TritonReady').lastTransitionTime, T0.toISOString(), 'unchanged condition keeps its time');
    assert.equal(cond(done.conditions, 'Degraded').lastTransitionTime, T0.toISOString());
  });

  test('a spec change not yet observed by the Deployment controller is a rollout', () => {
    const rs = sampleResource();
    const api = ready('vision-api', 2);
    api.metadata.generation = 2; // observedGeneration still 1
    const s = computeStatus(rs, { api, triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T0);
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.match(cond(s.conditions, 'ApiReady').message, /not yet observed/);
  });

  test('crash loop: Degraded, Ready False even though the Deployment counts its replicas ready', () => {
    const rs = sampleResource();
    const s = computeStatus(rs, {
      api: ready('vision-api', 2),
      triton: ready('vision-triton', 1),
      pods: { api: [], triton: [crashPod('vision-triton-abc', 'triton')] },
    }, T0);
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.equal(cond(s.conditions, 'Ready').reason, 'CrashLoopBackOff');
    assert.equal(cond(s.conditions, 'TritonReady').status, 'False');
    assert.equal(cond(s.conditions, 'ApiReady').status, 'True');
    assert.equal(cond(s.conditions, 'Degraded').status, 'True');
    assert.equal(cond(s.conditions, 'Progressing').status, 'False');
    assert.match(cond(s.conditions, 'Degraded').message, /vision-triton-abc.*CrashLoopBackOff.*last exit 1.*5 restarts.*model/);
    assert.deepEqual(s.lastFailure && { ...s.lastFailure, message: '' }, { component: 'triton', reason: 'CrashLoopBackOff', message: '', time: T0.toISOString() });
  });

  test('the last failure outlives recovery; image pull failures and stalled rollouts degrade too', () => {
    const rs = sampleResource();
    rs.status = computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [crashPod('a', 'api', 'ImagePullBackOff')], triton: [] } }, T0);
    assert.equal(rs.status.lastFailure?.reason, 'ImagePullBackOff');
    const healed = computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T1);
    assert.equal(cond(healed.conditions, 'Ready').status, 'True');
    assert.equal(healed.lastFailure?.reason, 'ImagePullBackOff');
    assert.equal(healed.lastFailure?.time, T0.toISOString());

    const stalled = deployment('vision-triton', 1, { replicas: 1, updatedReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'took too long' }] });
    const s = computeStatus(rs, { api: ready('vision-api', 2), triton: stalled, pods: { api: [], triton: [] } }, T1);
    assert.equal(cond(s.conditions, 'Degraded').reason, 'ProgressDeadlineExceeded');
  });

  test('a failed apply is a Degraded ReconcileError', () => {
    const s = computeStatus(sampleResource(), { pods: { api: [], triton: [] }, reconcileError: 'HTTP 422: bad' }, T0);
    assert.equal(cond(s.conditions, 'Degraded').reason, 'ReconcileError');
    assert.equal(s.lastFailure?.component, 'operator');
  });

  test('computing twice from the same observations gives an equal status (no needless writes)', () => {
    const rs = sampleResource();
    const obs = { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [], triton: [crashPod('p', 'triton')] } };
    rs.status = computeStatus(rs, obs, T0);
    assert.ok(sameJson(computeStatus(rs, obs, T1), rs.status));
    assert.ok(!sameJson(computeStatus(rs, { ...obs, pods: { api: [], triton: [] } }, T1), rs.status));
  });

  test('sameJson ignores key order and undefined members', () => {
    assert.ok(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1, d: undefined }));
    assert.ok(!sameJson({ a: [1, 2] }, { a: [2, 1] }));
    assert.ok(!sameJson({ a: 1 }, { a: '1' }));
  });

  // Issue 15, point 2: with an HPA the Deployment may ask for fewer replicas than min.
  test('Ready only with at least replicas.min available pods of the current template', () => {
    const rs = sampleResource(); // api min 2
    const scaledDown = deployment('vision-api', 1, { replicas: 1, readyReplicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    let s = computeStatus(rs, { api: scaledDown, triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T0);
    assert.equal(cond(s.conditions, 'ApiReady').status, 'False');
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.equal(s.api?.replicas, 2);

    // Mid-rollout: 3 available but 2 of them are old pods, so only 1 current.
    const rolling = deployment('vision-api', 2, { replicas: 3, readyReplicas: 3, updatedReplicas: 1, availableReplicas: 3 });
    s = computeStatus(rs, { api: rolling, triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T0);
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.equal(cond(s.conditions, 'Progressing').status, 'True');
    assert.match(cond(s.conditions, 'Progressing').message, /1 of 2 replicas updated/);

    // Rollout still finishing, but min current pods available: Ready and Progressing both True.
    const almost = deployment('vision-api', 2, { replicas: 3, readyReplicas: 3, updatedReplicas: 2, availableReplicas: 3 });
    s = computeStatus({ ...rs, spec: { ...rs.spec, api: { ...rs.spec.api, replicas: { min: 1, max: 6 } } } }, { api: almost, triton: ready('vision-triton', 1), pods: { api: [], triton: [] } }, T0);
    assert.equal(cond(s.conditions, 'Ready').status, 'True');
    assert.equal(cond(s.conditions, 'Progressing').status, 'True');
  });

  // Issue 15, point 3.
  test('a Running pod that restarts again and again, or was OOMKilled, is Degraded', () => {
    const rs = sampleResource();
    const at = (min: number) => new Date(T0.getTime() + min * 60_000);
    /** Running since `current`, after a run that started at `previous` and exited 10 s before `current`. */
    const running = (restartCount: number, current = at(-60), previous?: Date, startTime = at(-60)): ObservedPod => ({
      metadata: { name: 'vision-api-x', uid: 'u1', labels: {} },
      status: {
        phase: 'Running',
        startTime: startTime.toISOString(),
        containerStatuses: [{
          name: 'api', ready: true, restartCount, state: { running: { startedAt: current.toISOString() } },
          ...(previous ? { lastState: { terminated: { reason: 'Error', exitCode: 1, startedAt: previous.toISOString(), finishedAt: new Date(current.getTime() - 10_000).toISOString() } } } : {}),
        }],
      },
    });
    const obs = (pod: ObservedPod) => ({ api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [pod], triton: [] } });

    let s = computeStatus(rs, obs(running(0)), at(0));
    assert.equal(cond(s.conditions, 'Ready').status, 'True');
    s = computeStatus(rs, obs(running(2, at(1.5), at(1))), at(2));
    assert.equal(cond(s.conditions, 'Degraded').status, 'False', 'two restarts: not yet a loop');
    s = computeStatus(rs, obs(running(4, at(2.8), at(2))), at(3));
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
    assert.equal(cond(s.conditions, 'Degraded').reason, 'CrashLooping');
    assert.match(cond(s.conditions, 'Degraded').message, /vision-api-x container api restarted 4 times in 10 min \(last exit 1 Error\)/);
    // Quiet for longer than the window: healthy again.
    s = computeStatus(rs, obs(running(4, at(2.8), at(2))), at(45));
    assert.equal(cond(s.conditions, 'Ready').status, 'True');

    const oom: ObservedPod = {
      metadata: { name: 'vision-api-x', labels: {} },
      status: { phase: 'Running', containerStatuses: [{ name: 'api', ready: true, restartCount: 1, state: {}, lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: at(50).toISOString() } } }] },
    };
    s = computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [oom], triton: [] } }, at(51));
    assert.equal(cond(s.conditions, 'Degraded').reason, 'OOMKilled');
    assert.match(cond(s.conditions, 'Degraded').message, /vision-api-x container api was OOMKilled/);
    assert.equal(cond(s.conditions, 'Ready').status, 'False');
  });

  test('restarts within the window come from the pod\'s own status: the same answer after an operator restart', () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const ago = (min: number) => new Date(now.getTime() - min * 60_000).toISOString();
    const pod = (restartCount: number, startTime: string, running?: string, last?: { startedAt?: string; finishedAt?: string }): [ObservedPod, NonNullable<NonNullable<ObservedPod['status']>['containerStatuses']>[number]] => {
      const c = { name: 'api', restartCount, state: running ? { running: { startedAt: running } } : { waiting: { reason: 'CrashLoopBackOff' } }, ...(last ? { lastState: { terminated: { reason: 'Error', exitCode: 1, ...last } } } : {}) };
      return [{ metadata: { name: 'p' }, status: { startTime, containerStatuses: [c] } }, c];
    };
    // Four restarts over three days, the latest five minutes ago: one in the window, not a crash loop
    // (an in-memory tracker seeing this pod for the first time counted all four).
    assert.equal(restartsWithin(...pod(4, ago(3 * 24 * 60), ago(5), { startedAt: ago(24 * 60), finishedAt: ago(5.2) }), now), 1);
    const rs = sampleResource();
    const [old] = pod(4, ago(3 * 24 * 60), ago(5), { startedAt: ago(24 * 60), finishedAt: ago(5.2) });
    assert.equal(cond(computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [old], triton: [] } }, now).conditions, 'Degraded').status, 'False');
    // A pod younger than the window: every restart is in it, seen at the first look.
    const [young] = pod(3, ago(8), ago(1), { startedAt: ago(3), finishedAt: ago(1.1) });
    const s = computeStatus(rs, { api: ready('vision-api', 2), triton: ready('vision-triton', 1), pods: { api: [young], triton: [] } }, now);
    assert.equal(cond(s.conditions, 'Degraded').reason, 'CrashLooping');
    // An older pod restarting every two minutes: the last cycle paces the earlier restarts, capped by the count.
    assert.equal(restartsWithin(...pod(30, ago(120), ago(1), { startedAt: ago(3), finishedAt: ago(1.1) }), now), 5); // at 1, 3, 5, 7 and 9 min ago
    assert.equal(restartsWithin(...pod(3, ago(120), ago(1), { startedAt: ago(3), finishedAt: ago(1.1) }), now), 3);
    // The only restart long ago, or none: nothing in the window.
    assert.equal(restartsWithin(...pod(1, ago(120), ago(30), { startedAt: ago(120), finishedAt: ago(30.1) }), now), 0);
    assert.equal(restartsWithin(...pod(0, ago(120), ago(120)), now), 0);
    // Waiting to start again after an exit two minutes ago: that restart is in the window.
    assert.equal(restartsWithin(...pod(5, ago(120), undefined, { startedAt: ago(3), finishedAt: ago(2) }), now), 1);
  });

  // Issue 15, point 4.
  test('an unschedulable pod: Degraded Unschedulable with the scheduler\'s message', () => {
    const rs = sampleResource();
    const pending: ObservedPod = {
      metadata: { name: 'vision-triton-p', labels: {} },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.' }] },
    };
    const s = computeStatus(rs, { api: ready('vision-api', 2), triton: deployment('vision-triton', 1, { replicas: 1, updatedReplicas: 1, unavailableReplicas: 1 }), pods: { api: [], triton: [pending] } }, T0);
    assert.equal(cond(s.conditions, 'Degraded').reason, 'Unschedulable');
    assert.match(cond(s.conditions, 'Degraded').message, /vision-triton-p cannot be scheduled: 0\/3 nodes are available: 3 Insufficient nvidia.com\/gpu/);
    assert.equal(cond(s.conditions, 'Progressing').status, 'False');
  });
});
