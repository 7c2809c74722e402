import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHealthServer } from '../../src/operator/health.js';
import { OperatorMetrics } from '../../src/operator/metrics.js';

test('probes answer from the checks; /metrics serves the operator’s own registry', async () => {
  let ready = false;
  const metrics = new OperatorMetrics();
  metrics.reconciles.inc({ result: 'success' });
  const server = await startHealthServer('127.0.0.1', 0, { live: () => true, ready: () => ready }, metrics.registry);
  try {
    const base = `http://127.0.0.1:${server.port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    ready = true;
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const text = await (await fetch(`${base}/metrics`)).text();
    assert.match(text, /recognition_operator_reconcile_total\{result="success"\} 1/);
    assert.doesNotMatch(text, /process_cpu_seconds_total/, 'default metrics only when asked for');
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${base}/healthz`, { method: 'POST' })).status, 405);
  } finally {
    await server.close();
  }
});
