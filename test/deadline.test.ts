import assert from 'node:assert/strict';
import { test } from 'node:test';
import { after, before } from 'node:test';
import { deadlineSignal, isTimeoutReason, raceSignal, withTimeout } from '../src/deadline.js';

// AbortSignal.timeout's clock does not hold the process open (by design: a server's sockets
// do); here nothing else would, so keep the event loop alive while the tests wait.
let keepAlive: NodeJS.Timeout;
before(() => {
  keepAlive = setInterval(() => {}, 1_000);
});
after(() => clearInterval(keepAlive));

test('deadlineSignal aborts with a TimeoutError at the deadline, or at once with the caller\'s reason', async () => {
  const s = deadlineSignal(Date.now() + 10);
  await new Promise((r) => s.addEventListener('abort', r, { once: true }));
  assert.equal(isTimeoutReason(s.reason), true);

  const caller = new AbortController();
  const both = deadlineSignal(Date.now() + 60_000, caller.signal);
  caller.abort(new Error('client gone'));
  assert.equal(both.aborted, true);
  assert.equal((both.reason as Error).message, 'client gone');
});

test('raceSignal settles as the work does, or rejects with the abort reason', async () => {
  assert.equal(await raceSignal(Promise.resolve(7), new AbortController().signal), 7);
  await assert.rejects(raceSignal(Promise.reject(new Error('work failed')), new AbortController().signal), /work failed/);
  const c = new AbortController();
  const pending = raceSignal(new Promise<never>(() => {}), c.signal);
  c.abort(new Error('stop'));
  await assert.rejects(pending, /stop/);
  // An already-aborted signal rejects at once and a late rejection of the work is not unhandled.
  await assert.rejects(raceSignal(Promise.reject(new Error('late')), c.signal), /stop/);
});

test('withTimeout returns the fallback only when the time runs out', async () => {
  assert.equal(await withTimeout(Promise.resolve('done'), 1_000, () => 'timeout'), 'done');
  assert.equal(await withTimeout(new Promise<string>(() => {}), 10, () => 'timeout'), 'timeout');
  await assert.rejects(withTimeout(Promise.reject(new Error('boom')), 1_000, () => 'timeout'), /boom/);
});
