import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from '../../src/operator/queue.js';

describe('work queue', () => {
  test('dedups a key that is waiting', async () => {
    const q = new WorkQueue();
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'ns/a');
    assert.equal(await q.get(), 'ns/b');
  });

  test('never hands out a key while it is processed; an add meanwhile requeues it at done()', async () => {
    const q = new WorkQueue();
    q.add('ns/a');
    const first = await q.get();
    assert.equal(first, 'ns/a');
    q.add('ns/a');
    q.add('ns/a');
    assert.equal(q.length, 0, 'not queued while in flight');
    let second: string | undefined;
    const waiting = q.get().then((k) => (second = k));
    await new Promise((r) => setImmediate(r));
    assert.equal(second, undefined, 'a second worker gets nothing meanwhile');
    q.done('ns/a');
    await waiting;
    assert.equal(second, 'ns/a', 'requeued once at done()');
    q.done('ns/a');
    assert.equal(q.length, 0);
  });

  test('per-key exponential backoff, capped, reset by forget()', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    const delays = [1, 2, 3, 4, 5, 6].map(() => q.addRateLimited('ns/a'));
    assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000]);
    assert.equal(q.addRateLimited('ns/b'), 100, 'other keys have their own backoff');
    q.forget('ns/a');
    assert.equal(q.failureCount('ns/a'), 0);
    assert.equal(q.addRateLimited('ns/a'), 100);
    q.shutDown();
  });

  test('addAfter delivers the key later', async () => {
    const q = new WorkQueue();
    // The queue's timers do not hold the process open (the operator's informers do); here a
    // timer of the test's own does.
    const keepAlive = setInterval(() => undefined, 1_000);
    q.addAfter('ns/a', 20);
    assert.equal(q.length, 0);
    assert.equal(await q.get(), 'ns/a');
    clearInterval(keepAlive);
    q.shutDown();
  });

  test('addAfter: a sooner delay replaces a later one pending for the key, a later one does not replace a sooner', { timeout: 10_000 }, async () => {
    const q = new WorkQueue();
    const keepAlive = setInterval(() => undefined, 1_000);
    // A canary's next check (seconds) must not wait behind a long backoff or an old interval.
    q.addAfter('ns/a', 600_000);
    q.addAfter('ns/a', 20);
    assert.equal(await q.get(), 'ns/a');
    q.done('ns/a');
    q.addAfter('ns/b', 20);
    q.addAfter('ns/b', 600_000);
    assert.equal(await q.get(), 'ns/b');
    clearInterval(keepAlive);
    q.shutDown();
  });

  test('shutDown releases waiting workers and refuses new keys', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('ns/a');
    assert.equal(await q.get(), undefined);
  });
});
