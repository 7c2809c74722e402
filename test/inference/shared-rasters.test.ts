import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isShared, SharedRasterPool } from '../../src/inference/shared-rasters.js';

test('a taken buffer is on shared memory and of the asked length', () => {
  const pool = new SharedRasterPool();
  const a = pool.take(12);
  assert.equal(a.length, 12);
  assert.ok(isShared(a));
  assert.ok(!isShared(new Float32Array(12)));
});

test('a given-back buffer serves the next take of its length only', () => {
  const pool = new SharedRasterPool();
  const a = pool.take(12);
  pool.give(a);
  assert.notEqual(pool.take(6), a);
  assert.equal(pool.take(12), a);
  assert.notEqual(pool.take(12), a, 'taken once, it is no longer in the pool');
});

test('the pool keeps at most `keep` idle buffers per length, and never an unshared one', () => {
  const pool = new SharedRasterPool(2);
  const [a, b, c] = [pool.take(4), pool.take(4), pool.take(4)];
  for (const x of [a, b, c]) pool.give(x);
  pool.give(new Float32Array(4));
  const again = [pool.take(4), pool.take(4), pool.take(4)];
  assert.deepEqual(new Set(again.filter((x) => x === a || x === b || x === c)).size, 2);
  assert.ok(again.every(isShared));
});
