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

test('byte rasters (UINT8 models) are pooled apart from float ones of the same length', () => {
  const pool = new SharedRasterPool();
  const bytes = pool.takeBytes(12);
  assert.ok(bytes instanceof Uint8Array && isShared(bytes) && bytes.length === 12);
  pool.give(bytes);
  const floats = pool.take(12);
  assert.ok((floats as ArrayBufferView) !== bytes, 'a float take never gets a byte raster');
  assert.equal(pool.takeBytes(12), bytes);
  pool.give(new Uint8Array(new SharedArrayBuffer(24), 0, 12)); // a view of part of a buffer: not one the pool made
  assert.equal(pool.takeBytes(12).buffer.byteLength, 12);
});
