/** The decode/inference capacity gate: exact slot and queue accounting, refusals, abort while queued. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CapacityExceeded, CapacityGate } from '../../src/recognition/capacity.js';

test('admits `concurrency` at once, queues `queueLength`, refuses the rest', async () => {
  const gate = new CapacityGate(2, 1, 3);
  const r1 = await gate.acquire();
  const r2 = await gate.acquire();
  let thirdIn = false;
  const third = gate.acquire().then((r) => ((thirdIn = true), r));
  await assert.rejects(gate.acquire(), (err: unknown) => err instanceof CapacityExceeded && err.retryAfterSeconds === 3);
  assert.deepEqual(gate.stats(), { active: 2, queued: 1, peakActive: 2, refused: 1 });
  assert.equal(thirdIn, false);
  r1();
  r1(); // a second release of the same slot changes nothing
  const r3 = await third;
  assert.equal(thirdIn, true);
  assert.deepEqual({ ...gate.stats(), refused: 0 }, { active: 2, queued: 0, peakActive: 2, refused: 0 });
  r2();
  r3();
  assert.equal(gate.stats().active, 0);
});

test('a handed-over slot cannot be taken by a newcomer in between', async () => {
  const gate = new CapacityGate(1, 5);
  const first = await gate.acquire();
  const queued = gate.acquire();
  first();
  // The slot went to the queued caller: a newcomer now waits (or is refused), never runs alongside.
  const newcomer = gate.acquire();
  const r = await queued;
  assert.equal(gate.stats().active, 1);
  r();
  (await newcomer)();
  assert.equal(gate.stats().peakActive, 1);
  assert.equal(gate.stats().active, 0);
});

test('a caller that gives up while queued leaves the queue', async () => {
  const gate = new CapacityGate(1, 1);
  const held = await gate.acquire();
  const controller = new AbortController();
  const waiting = gate.acquire(controller.signal);
  controller.abort(new Error('deadline'));
  await assert.rejects(waiting, /deadline/);
  assert.equal(gate.stats().queued, 0);
  held();
  assert.equal(gate.stats().active, 0);
});

test('queue length 0: refuses as soon as every slot is busy', async () => {
  const gate = new CapacityGate(1, 0);
  const held = await gate.acquire();
  await assert.rejects(gate.acquire(), CapacityExceeded);
  held();
  (await gate.acquire())();
});
