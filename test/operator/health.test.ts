import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHealthServer } from '../../src/operator/health.js';
import { OperatorMetrics } from '../../src/operator/metrics.js';

test('probes answer from the checks; /metrics serves the operator’s own registry', async () => {
  let ready = false;
  const metrics = new OperatorMetrics();
  metrics.reconciles.inc({ controller: 'recognitionservice', result: 'success' });
  metrics.requests.inc({ method: 'PATCH', code: '200' });
  metrics.isLeader.set({ name: 'lease' }, 1);
  const server = await startHealthServer('127.0.0.1', 0, { live: () => true, ready: () => ready }, metrics.registry);
  try {
    const base = `http://127.0.0.1:${server.port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    ready = true;
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const text = await (await fetch(`${base}/metrics`)).text();
    assert.match(text, /controller_runtime_reconcile_total\{controller="recognitionservice",result="success"\} 1/);
    assert.match(text, /rest_client_requests_total\{method="PATCH",code="200"\} 1/);
    assert.match(text, /leader_election_master_status\{name="lease"\} 1/);
    for (const name of ['controller_runtime_reconcile_time_seconds', 'workqueue_depth', 'workqueue_queue_duration_seconds', 'workqueue_work_duration_seconds', 'workqueue_retries_total']) {
      assert.match(text, new RegExp(`# TYPE ${name} `));
    }
    assert.doesNotMatch(text, /process_cpu_seconds_total/, 'default metrics only when asked for');
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${base}/healthz`, { method: 'POST' })).status, 405);
  } finally {
    await server.close();
  }
});
