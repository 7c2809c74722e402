/**
 * Redis failures on a private redis-server: stopped and restarted mid-test, hung, and
 * unreachable at start. The rate limiter must keep serving and recover by itself. (The
 * quota does not live in Redis: test/store/charging.test.ts.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.js';
import { count, limitsFor, makeKey, openTestDb, PrivateRedis, type TestDb } from './harness.js';

let t: TestDb;
let redis: PrivateRedis;
before(async () => {
  t = await openTestDb();
  redis = await PrivateRedis.start();
});
after(async () => {
  await redis.stop();
  await t.close();
});

describe('Redis outages', () => {
  test('Redis stopped and restarted mid-test: no throw, fallback, recovery', async () => {
    const changes: boolean[] = [];
    const warnings: string[] = [];
    const limits = await limitsFor(t.db, redis.url, {
      onDegraded: (d) => changes.push(d),
      logger: { warn: (_o, msg) => warnings.push(msg), info: () => {} },
      redisCoolOffMs: 100,
    });
    const seen: boolean[] = [];
    const unsubscribe = limits.onDegradedChange((d) => seen.push(d));
    try {
      const key = await makeKey(t.db, { quota: 8, rate: 4 });
      assert.equal(limits.mode(), 'redis');
      assert.equal(count(await Promise.all([1, 2, 3].map(() => limits.checkRate(key, 'recognition'))), (d) => d.allowed), 3);
      assert.equal((await redis.keys('*rate:recognition*')).length, 1);

      await redis.stop();
      // Calls go on while Redis is gone: the rate limit runs in this process (a fresh log, so 4 more).
      const rate = await Promise.all(Array.from({ length: 10 }, () => limits.checkRate(key, 'recognition')));
      assert.equal(count(rate, (d) => d.allowed), 4);
      assert.equal(limits.mode(), 'degraded');
      assert.deepEqual(changes, [true]);
      assert.deepEqual(seen, [true]);
      assert.equal(warnings.length, 1, 'one warning per outage, not one per call');
      const r = await limits.ready();
      assert.equal(r.ok, true);
      assert.equal(r.degraded, true);

      await redis.start();
      await eventually(() => limits.mode() === 'redis', { what: 'recovery by itself once Redis is back' });
      assert.deepEqual(changes, [true, false]);
      // Back on Redis: the restarted server (empty) gets the window again.
      const after = await Promise.all(Array.from({ length: 6 }, () => limits.checkRate(key, 'recognition')));
      assert.equal(count(after, (d) => d.allowed), 4);
      assert.equal((await redis.keys('*rate:recognition*')).length, 1);
      assert.equal((await limits.ready()).degraded, false);
    } finally {
      unsubscribe();
      await limits.close();
    }
  });

  test('a hung Redis (connection open, no replies) times out into the fallback and recovers', async () => {
    // The timeout is what makes a hung server a fallback; 500 ms leaves the first call (EVALSHA,
    // then EVAL on the fresh server) ample room on a busy machine before Redis is paused.
    const limits = await limitsFor(t.db, redis.url, { redisCommandTimeoutMs: 500, redisCoolOffMs: 200 });
    try {
      const key = await makeKey(t.db, { quota: 3 });
      assert.equal((await limits.checkRate(key, 'recognition')).allowed, true);
      redis.pause();
      const rate = await Promise.all(Array.from({ length: 12 }, () => limits.checkRate(key, 'recognition')));
      assert.equal(count(rate, (d) => d.allowed), 10, 'the in-process log takes over');
      assert.equal(limits.mode(), 'degraded');
      redis.resume();
      // No calls needed: the probe notices the server answering again.
      await eventually(() => limits.mode() === 'redis', { what: 'Redis mode once the server answers again' });
    } finally {
      redis.resume();
      await limits.close();
    }
  });

  test('Redis unreachable at start: createLimits resolves degraded and serves', async () => {
    const dead = await PrivateRedis.start();
    const url = dead.url;
    await dead.stop();
    const limits = await limitsFor(t.db, url, { redisConnectWaitMs: 300 });
    try {
      assert.equal(limits.mode(), 'degraded');
      const key = await makeKey(t.db, { quota: 2 });
      const rate = await Promise.all(Array.from({ length: 12 }, () => limits.checkRate(key, 'recognition')));
      assert.equal(count(rate, (d) => d.allowed), 10);
      assert.deepEqual(await limits.ready(), { ok: true, degraded: true, detail: 'degraded: Redis unreachable; per-process rate limits' });
      // And it picks Redis up when it appears.
      await dead.start();
      await eventually(() => limits.mode() === 'redis', { what: 'Redis mode once it appears' });
    } finally {
      await limits.close();
      await dead.stop();
    }
  });
});
