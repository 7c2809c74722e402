/** The in-process sliding log's own edges (the shared suite covers the common semantics). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InProcessRateLimiter } from '../../src/limits/in-process-rate-limiter.js';

test('a lowered limit refuses until enough old calls have left the window', () => {
  const limiter = new InProcessRateLimiter(60_000);
  try {
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) assert.equal(limiter.hit('k', 5, t0 + i * 1000).allowed, true);
    // The key's limit drops to 2: 5 calls are in the window, so 4 must leave (the 4th
    // oldest, made at t0 + 3 s, leaves at t0 + 63 s).
    const refused = limiter.hit('k', 2, t0 + 10_000);
    assert.deepEqual(refused, { allowed: false, limit: 2, remaining: 0, resetSeconds: 53, retryAfterSeconds: 53 });
    assert.equal(limiter.hit('k', 2, t0 + 62_999).allowed, false);
    assert.equal(limiter.hit('k', 2, t0 + 63_000).allowed, true);
  } finally {
    limiter.close();
  }
});

test('a limit of 0 refuses everything; idle keys are swept', () => {
  const limiter = new InProcessRateLimiter(60_000, () => 0);
  try {
    assert.deepEqual(limiter.hit('z', 0, 5), { allowed: false, limit: 0, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 });
    limiter.hit('a', 3, 1000);
    limiter.hit('b', 3, 50_000);
    limiter.sweep(61_000);
    assert.equal(limiter.size, 1, 'a (last call at 1 s) is gone, b (at 50 s) stays');
    limiter.sweep(110_000);
    assert.equal(limiter.size, 0);
  } finally {
    limiter.close();
  }
});
