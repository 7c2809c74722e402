import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay, retry } from '../src/backoff.js';

test('backoffDelay doubles from the base and stops at the cap, without jitter by default', () => {
  const b = { baseMs: 100, capMs: 1_000 };
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, b)), [100, 200, 400, 800, 1_000, 1_000]);
  // Far past the cap the ladder stays finite (no Infinity, no NaN with a zero base).
  assert.equal(backoffDelay(5_000, b), 1_000);
  assert.equal(backoffDelay(5_000, { baseMs: 0, capMs: 0 }), 0);
});

test("equal jitter draws within [half, all] of the ladder's step", () => {
  const b = { baseMs: 100, capMs: 1_000, jitter: 'equal' as const };
  assert.equal(backoffDelay(2, b, () => 0), 200);
  assert.equal(backoffDelay(2, b, () => 0.999_999), 399.9998);
  assert.equal(backoffDelay(9, b, () => 0.5), 750);
  for (let i = 0; i < 200; i++) {
    const d = backoffDelay(3, b);
    assert.ok(d >= 400 && d <= 800, `${d} outside [400, 800]`);
  }
});

test('retry tries again after retryable failures only, up to maxAttempts', async () => {
  let calls = 0;
  const flaky = async (attempt: number): Promise<string> => {
    assert.equal(attempt, calls++);
    if (calls < 3) throw new Error('transient');
    return 'done';
  };
  assert.equal(await retry(flaky, { retryable: () => true, baseMs: 1, capMs: 2 }), 'done');
  assert.equal(calls, 3);

  calls = 0;
  await assert.rejects(retry(flaky, { retryable: () => true, maxAttempts: 2, baseMs: 0, capMs: 0 }), /transient/);
  assert.equal(calls, 2);

  calls = 0;
  const permanent = new Error('permanent');
  await assert.rejects(retry(async () => { calls++; throw permanent; }, { retryable: (e) => e !== permanent, baseMs: 0, capMs: 0 }), permanent);
  assert.equal(calls, 1);
});

test('retry gives up with the last failure rather than start a wait that ends past `until`', async () => {
  // The first wait (40 ms) would end after `until` (30 ms from now) whenever it starts: one
  // call, then the failure, with no wait. Decided by the clock's direction, not its speed.
  let calls = 0;
  await assert.rejects(
    retry(async () => { calls++; throw new Error(`failure ${calls}`); }, { retryable: () => true, until: Date.now() + 30, baseMs: 40, capMs: 40 }),
    /^Error: failure 1$/,
  );
  assert.equal(calls, 1);
  // An `until` already passed: the same, even with no wait at all.
  calls = 0;
  await assert.rejects(retry(async () => { calls++; throw new Error(`failure ${calls}`); }, { retryable: () => true, until: Date.now() - 1, baseMs: 0, capMs: 0 }), /failure 1/);
  assert.equal(calls, 1);
});

test('an abort ends the wait at once and throws the last failure', async () => {
  const ac = new AbortController();
  const started = Date.now();
  const pending = retry(async () => { throw new Error('down'); }, { retryable: () => true, baseMs: 60_000, capMs: 60_000, signal: ac.signal });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(pending, /down/);
  assert.ok(Date.now() - started < 5_000);
});
