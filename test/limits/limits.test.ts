/**
 * The limiter's semantics, run against both implementations (Redis and in-process) on
 * real PostgreSQL and real Redis: exact counts under concurrency, header values, sliding
 * window, month rollover, quota release, balance.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, count, dropUsedPrefixes, limitsFor, makeKey, openTestDb, type TestDb } from './harness.js';
import { KEY_USAGE_TABLE } from '../../src/limits/quota-store.js';
import { utcMonth } from '../../src/limits/index.js';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(async () => {
  await dropUsedPrefixes();
  await t.close();
});

async function usageRow(keyId: string, month: string): Promise<number | undefined> {
  const row = await t.db(KEY_USAGE_TABLE).where({ key_id: keyId, month }).first<{ used: number } | undefined>('used');
  return row?.used;
}

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

    test('quota 5 with 12 parallel reservations admits exactly 5; release gives units back', async () => {
      const now = Date.parse('2026-05-15T08:00:00Z');
      const limits = await limitsFor(t.db, backend.redisUrl, { clock: () => now });
      try {
        const key = await makeKey(t.db, { quota: 5 });
        const results = await Promise.all(Array.from({ length: 12 }, () => limits.reserveQuota(key, 1)));
        assert.equal(count(results, (r) => r.allowed), 5);
        assert.deepEqual(results.filter((r) => r.allowed).map((r) => r.used).sort(), [1, 2, 3, 4, 5]);
        for (const r of results.filter((x) => !x.allowed)) assert.deepEqual(r, { allowed: false, limit: 5, used: 5, period: '2026-05' });
        assert.equal(await usageRow(key.keyId, '2026-05'), 5);

        await limits.releaseQuota(key, 2);
        assert.equal(await usageRow(key.keyId, '2026-05'), 3);
        const again = await Promise.all(Array.from({ length: 6 }, () => limits.reserveQuota(key, 1)));
        assert.equal(count(again, (r) => r.allowed), 2);
        assert.equal(await usageRow(key.keyId, '2026-05'), 5);
      } finally {
        await limits.close();
      }
    });

    test('multi-unit reservations (a batch) fit or are refused whole', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        const key = await makeKey(t.db, { quota: 10 });
        const results = await Promise.all([4, 4, 4, 4].map((n) => limits.reserveQuota(key, n)));
        assert.equal(count(results, (r) => r.allowed), 2);
        assert.equal((await limits.reserveQuota(key, 3)).allowed, false);
        assert.equal((await limits.reserveQuota(key, 2)).allowed, true);
        assert.equal((await limits.reserveQuota(key, 11)).allowed, false);
        const zero = await makeKey(t.db, { quota: 0 });
        assert.deepEqual(await limits.reserveQuota(zero, 1), { allowed: false, limit: 0, used: 0, period: utcMonth(Date.now()) });
        await assert.rejects(limits.reserveQuota(key, -1), RangeError);
      } finally {
        await limits.close();
      }
    });

    test('the quota is per calendar month in UTC', async () => {
      let now = Date.parse('2026-01-31T23:59:59.000Z');
      const limits = await limitsFor(t.db, backend.redisUrl, { clock: () => now });
      try {
        const key = await makeKey(t.db, { quota: 3 });
        const jan = await Promise.all(Array.from({ length: 5 }, () => limits.reserveQuota(key, 1)));
        assert.equal(count(jan, (r) => r.allowed), 3);
        now = Date.parse('2026-02-01T00:00:00.000Z');
        const feb = await Promise.all(Array.from({ length: 5 }, () => limits.reserveQuota(key, 1)));
        assert.equal(count(feb, (r) => r.allowed), 3);
        assert.equal(await usageRow(key.keyId, '2026-01'), 3);
        assert.equal(await usageRow(key.keyId, '2026-02'), 3);
        // Midnight UTC is what counts, whatever the local time zone: 23:30 on Feb 28 in
        // UTC-5 is already March in UTC.
        now = Date.parse('2026-02-28T23:30:00-05:00');
        const march = await limits.reserveQuota(key, 1);
        assert.equal(march.allowed, true);
        assert.equal(march.period, '2026-03');
        assert.equal(await usageRow(key.keyId, '2026-03'), 1);
        // A release after the month turned goes back to the month it was taken from.
        const late = await limits.reserveQuota(key, 1);
        now = Date.parse('2026-04-01T00:00:01Z');
        await limits.releaseQuota(key, 1, late.period);
        assert.equal(await usageRow(key.keyId, '2026-03'), 1);
        assert.equal(await usageRow(key.keyId, '2026-04'), undefined);
      } finally {
        await limits.close();
      }
    });

    test('balance never goes below zero under 20 parallel debits; refunds; null is unlimited', async () => {
      const limits = await limitsFor(t.db, backend.redisUrl);
      try {
        const key = await makeKey(t.db, { balance: 7 });
        const debits = await Promise.all(Array.from({ length: 20 }, () => limits.debitBalance(key.orgId, 1)));
        assert.equal(count(debits, (d) => d), 7);
        const balance = async (): Promise<number | null> =>
          (await t.db('organizations').where({ id: key.orgId }).first<{ balance: number | null }>('balance')).balance;
        assert.equal(await balance(), 0);
        assert.equal(await limits.debitBalance(key.orgId, 1), false);
        await limits.refundBalance(key.orgId, 3);
        assert.equal(await balance(), 3);
        assert.equal(await limits.debitBalance(key.orgId, 4), false, 'a batch larger than the balance is refused whole');
        assert.equal(await balance(), 3);
        assert.equal(await limits.debitBalance(key.orgId, 3), true);
        assert.equal(await balance(), 0);

        const unlimited = await makeKey(t.db, { balance: null });
        const free = await Promise.all(Array.from({ length: 20 }, () => limits.debitBalance(unlimited.orgId, 5)));
        assert.ok(free.every(Boolean));
        await limits.refundBalance(unlimited.orgId, 5);
        const row = await t.db('organizations').where({ id: unlimited.orgId }).first<{ balance: number | null }>('balance');
        assert.equal(row.balance, null);
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
