/**
 * Several replicas sharing PostgreSQL and Redis still hold the limits exactly: first two
 * limiter instances in this process, then two real processes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { count, dropUsedPrefixes, limitsFor, makeKey, openTestDb, uniquePrefix, type TestDb } from './harness.js';
import { TEST_REDIS_URL } from '../helpers/services.js';
import type { KeyLimits } from '../../src/limits/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(async () => {
  await dropUsedPrefixes();
  await t.close();
});

describe('replicas sharing Redis and PostgreSQL', () => {
  test('two limiter instances: 30 parallel checks across both admit exactly 10', async () => {
    const prefix = uniquePrefix();
    const a = await limitsFor(t.db, TEST_REDIS_URL, { keyPrefix: prefix });
    const b = await limitsFor(t.db, TEST_REDIS_URL, { keyPrefix: prefix });
    try {
      const key = await makeKey(t.db, { quota: 5 });
      const rate = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).checkRate(key, 'recognition')));
      assert.equal(count(rate, (d) => d.allowed), 10);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('two processes: 15 + 15 parallel checks admit exactly 10; quota 5 with 6 + 6 admissions admits 5', async () => {
    const prefix = uniquePrefix();
    // limitsFor registers the prefix for clean-up; this instance itself is not used.
    await (await limitsFor(t.db, TEST_REDIS_URL, { keyPrefix: prefix })).close();
    const key = await makeKey(t.db, { quota: 5 });
    const replicas = [startReplica(key, prefix, 15, 6), startReplica(key, prefix, 15, 6)];
    try {
      for (const r of replicas) assert.equal(await r.ready, 'ready redis');
      for (const r of replicas) r.go();
      const results = await Promise.all(replicas.map((r) => r.result));
      assert.equal(results[0].rateAllowed + results[1].rateAllowed, 10, JSON.stringify(results));
      assert.equal(results[0].quotaAllowed + results[1].quotaAllowed, 5, JSON.stringify(results));
      const row = await t.db('key_usage').where({ key_id: key.keyId }).first<{ used: number }>('used');
      assert.equal(row.used, 5);
    } finally {
      for (const r of replicas) r.kill();
    }
  });
});

function startReplica(key: KeyLimits, prefix: string, rateN: number, quotaN: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/replica-worker.ts')], {
    env: { ...process.env, DATABASE_URL: t.url, REDIS_URL: TEST_REDIS_URL, KEY_PREFIX: prefix, KEY: JSON.stringify(key), RATE_N: String(rateN), QUOTA_N: String(quotaN) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`replica exited (code ${child.exitCode})`);
    return value;
  };
  const ready = next();
  return {
    ready,
    go: () => child.stdin.write('go\n'),
    result: ready.then(next).then((l) => JSON.parse(l) as { rateAllowed: number; quotaAllowed: number }),
    kill: () => {
      if (child.exitCode === null) child.kill();
    },
  };
}
