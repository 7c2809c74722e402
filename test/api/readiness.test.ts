/** /readyz while the limiter store is down: still ready (the API keeps serving), and says so. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, json } from '../helpers/app.js';
import { freePort } from '../helpers/local-server.js';

test('Redis unreachable: /readyz is 200 and reports the limiter as degraded', async () => {
  const t = await buildTestApp({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  try {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<{ status: string; checks: Record<string, string>; degraded: string[] }>(res);
    assert.equal(body.status, 'ready');
    assert.deepEqual(body.degraded, ['limits']);
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^limiter_degraded 1$/m);
    assert.equal(body.checks.database, 'ok');
    assert.equal(body.checks.inference, 'ok');
    assert.match(body.checks.limits, /degraded/);
  } finally {
    await t.close();
  }
});
