/**
 * Regression: the Redis quota counter can run ahead of PostgreSQL (a replica that cannot
 * reach Redis gives units back in PostgreSQL only). A refusal by the counter must be
 * confirmed against PostgreSQL, or freed quota stays refused until the counter expires.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { dropUsedPrefixes, limitsFor, makeKey, openTestDb, uniquePrefix, type TestDb } from './harness.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(async () => {
  await dropUsedPrefixes();
  await t?.close();
});

test('quota given back on a replica without Redis is admitted again at once on one with Redis', async () => {
  const prefix = uniquePrefix();
  const withRedis = await limitsFor(t.db, TEST_REDIS_URL, { keyPrefix: prefix });
  const withoutRedis = await limitsFor(t.db, 'redis://127.0.0.1:1', { keyPrefix: prefix, redisConnectWaitMs: 200 });
  try {
    assert.equal(withRedis.mode(), 'redis');
    assert.equal(withoutRedis.mode(), 'degraded');
    const key = await makeKey(t.db, { quota: 2 });
    assert.equal((await withRedis.reserveQuota(key, 1)).allowed, true);
    assert.equal((await withRedis.reserveQuota(key, 1)).allowed, true);
    assert.equal((await withRedis.reserveQuota(key, 1)).allowed, false, 'quota 2 is used up');

    await withoutRedis.releaseQuota(key, 2);
    const again = await withRedis.reserveQuota(key, 1);
    assert.equal(again.allowed, true, 'the freed units are admitted');
    assert.equal(again.used, 1);
    assert.equal((await withRedis.reserveQuota(key, 1)).allowed, true);
    assert.equal((await withRedis.reserveQuota(key, 1)).allowed, false, 'and still exactly the quota');
  } finally {
    await withRedis.close();
    await withoutRedis.close();
  }
});
