/**
 * The rate limiter's semantics, run against both implementations (Redis and in-process):
 * exact counts under concurrency, header values, the sliding window, per-key overrides.
 * (Quota and balance are charged by admission: test/store/charging.test.ts.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, count, dropUsedPrefixes, limitsFor, makeKey, openTestDb, type TestDb } from './harness.js';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(async () => {
  await dropUsedPrefixes();
  await t.close();
});

for (const backend of BACKENDS) {
  describe(`limits (${backend.name})`, () => {
    test('30 parallel checks of one key admit exactly 10, with sane header values', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        assert.equal(limits.mode(), backend.name);
        const key = await makeKey(t.db);
        const decisions = await Promise.all(Array.from({ length: 30 }, () => limits.checkRate(key, 'recognition')));
        const admitted = decisions.filter((d) => d.allowed);
        const refused = decisions.filter((d) => !d.allowed);
        assert.equal(admitted.length, 10);
        assert.equal(refused.length, 20);
        // Each admitted call saw a different remaining count: 9 down to 0.
        assert.deepEqual(admitted.map((d) => d.remaining).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        for (const d of decisions) {
          assert.equal(d.limit, 10);
          assert.ok(d.resetSeconds >= 1 && d.resetSeconds <= 60, `reset ${d.resetSeconds}`);
        }
        for (const d of refused) {
          assert.equal(d.remaining, 0);
          assert.ok(d.retryAfterSeconds !== undefined && d.retryAfterSeconds >= 1 && d.retryAfterSeconds <= 60);
        }
        for (const d of admitted) assert.equal(d.retryAfterSeconds, undefined);
      } finally {
        await limits.close();
      }
    });

    test('a busy event loop is not mistaken for a slow Redis (no double counting)', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        const key = await makeKey(t.db);
        const pending = Promise.all(Array.from({ length: 30 }, () => limits.checkRate(key, 'recognition')));
        // Block this process past the command timeout while the replies are on their way,
        // as a CPU-heavy request (image decoding) would.
        const until = Date.now() + 800;
        while (Date.now() < until);
        const decisions = await pending;
        assert.equal(count(decisions, (d) => d.allowed), 10);
        assert.equal(limits.mode(), backend.name, 'still on Redis, not degraded');
      } finally {
        await limits.close();
      }
    });

    test('the window slides: a slot comes back 60 s after the call that used it', async () => {
      let now = Date.parse('2026-03-10T12:00:00.000Z');
      const limits = await limitsFor(t.db, backend.redisUrl, { clock: () => now });
      try {
        const key = await makeKey(t.db, { rate: 3 });
        const first = await limits.checkRate(key, 'recognition');
        assert.deepEqual(first, { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
        now += 20_000;
        await limits.checkRate(key, 'recognition');
        now += 20_000;
        assert.equal((await limits.checkRate(key, 'recognition')).remaining, 0);
        now += 5_000; // 45 s after the first call
        const refused = await limits.checkRate(key, 'recognition');
        assert.deepEqual(refused, { allowed: false, limit: 3, remaining: 0, resetSeconds: 15, retryAfterSeconds: 15 });
        now += 14_999;
        assert.equal((await limits.checkRate(key, 'recognition')).allowed, false);
        now += 1; // exactly 60 s after the first call: it has left the window
        const back = await limits.checkRate(key, 'recognition');
        assert.deepEqual(back, { allowed: true, limit: 3, remaining: 0, resetSeconds: 20 });
      } finally {
        await limits.close();
      }
    });

    test('a lowered per-key limit refuses until enough old calls have left the window', async () => {
      let now = Date.parse('2026-03-11T12:00:00.000Z');
      const limits = await limitsFor(t.db, backend.redisUrl, { clock: () => now });
      try {
        const key = await makeKey(t.db, { rate: 5 });
        for (let i = 0; i < 5; i++, now += 1000) assert.equal((await limits.checkRate(key, 'recognition')).allowed, true);
        const lowered = { ...key, rateLimitPerMinute: 2 };
        now = Date.parse('2026-03-11T12:00:10.000Z');
        // 5 calls in the window, limit 2: the 4th oldest (at 3 s) must leave first, at 63 s.
        assert.deepEqual(await limits.checkRate(lowered, 'recognition'), {
          allowed: false, limit: 2, remaining: 0, resetSeconds: 53, retryAfterSeconds: 53,
        });
        now = Date.parse('2026-03-11T12:01:03.000Z');
        assert.equal((await limits.checkRate(lowered, 'recognition')).allowed, true);
      } finally {
        await limits.close();
      }
    });

    test('per-key override applies to recognition; lookup has its own 600/min bucket', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        const key = await makeKey(t.db, { rate: 4 });
        const rec = await Promise.all(Array.from({ length: 8 }, () => limits.checkRate(key, 'recognition')));
        assert.equal(count(rec, (d) => d.allowed), 4);
        assert.ok(rec.every((d) => d.limit === 4));
        const lookups = await Promise.all(Array.from({ length: 605 }, () => limits.checkRate(key, 'lookup')));
        assert.equal(count(lookups, (d) => d.allowed), 600);
        assert.ok(lookups.every((d) => d.limit === 600));
        // Another key is not affected by the first one's exhaustion.
        const other = await makeKey(t.db);
        assert.equal((await limits.checkRate(other, 'recognition')).allowed, true);
      } finally {
        await limits.close();
      }
    });

    test('ready() reports the store and never makes the service unready', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        const r = await limits.ready();
        assert.equal(r.ok, true);
        assert.equal(r.degraded, false);
        assert.match(r.detail ?? '', backend.name === 'redis' ? /^redis$/ : /^embedded/);
      } finally {
        await limits.close();
      }
    });
  });
}
