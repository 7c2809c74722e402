/** The event recorder's rate limits, on a recording sink (the cluster tests read real Events). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventRecorder } from '../../src/operator/events.js';
import { sampleResource } from './fixtures.js';

test('events: repeats dropped within the window, a per-object burst, then one per refill period', async () => {
  const sent: Array<Record<string, any>> = [];
  let now = 0;
  const rec = new EventRecorder({ create: async (_ns, body) => void sent.push(body) }, { instance: 'op-1', burst: 3, refillMs: 60_000, dedupWindowMs: 600_000, now: () => now });
  const rs = sampleResource();
  assert.ok(rec.record(rs, 'Warning', 'CrashLoopBackOff', 'Reconcile', 'pod a crashed'));
  assert.ok(!rec.record(rs, 'Warning', 'CrashLoopBackOff', 'Reconcile', 'pod a crashed'), 'same event again: dropped');
  assert.ok(rec.record(rs, 'Normal', 'Created', 'Create', 'created Deployment prod/vision-api'));
  assert.ok(rec.record(rs, 'Normal', 'Created', 'Create', 'created Service prod/vision-api'));
  assert.ok(!rec.record(rs, 'Normal', 'Created', 'Create', 'created Service prod/vision-triton'), 'burst spent');
  assert.ok(rec.record(sampleResource({}, 'other') && { ...sampleResource({}, 'other'), metadata: { ...sampleResource().metadata, name: 'other', uid: 'u2' } }, 'Normal', 'Created', 'Create', 'x'), 'another object has its own bucket');
  now += 60_000;
  assert.ok(rec.record(rs, 'Normal', 'Created', 'Create', 'created Service prod/vision-triton'), 'refilled');
  now += 600_000;
  assert.ok(rec.record(rs, 'Warning', 'CrashLoopBackOff', 'Reconcile', 'pod a crashed'), 'after the window');
  await new Promise((r) => setImmediate(r));
  const first = sent[0];
  assert.equal(first.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual([first.type, first.reason, first.action, first.note, first.reportingInstance], ['Warning', 'CrashLoopBackOff', 'Reconcile', 'pod a crashed', 'op-1']);
  assert.deepEqual([first.regarding.kind, first.regarding.name, first.regarding.uid], ['RecognitionService', 'vision', rs.metadata.uid]);
  assert.equal(sent.length, 6);
});
