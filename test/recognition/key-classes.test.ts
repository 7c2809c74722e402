import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyClasses } from '../../src/recognition/key-classes.js';

const catalog = async (): Promise<string[]> => ['person', 'dog', 'sports ball'];
const unreadable = async (): Promise<string[]> => {
  throw new Error('catalog unreachable');
};

test('entries are trimmed, emptied ones dropped and repeats removed; known labels pass in order', async () => {
  assert.deepEqual(await keyClasses([' sports ball ', 'dog', '', 'dog'], catalog), { classes: ['sports ball', 'dog'] });
});

test("no entries means no classes, '*' means all: neither needs the catalog", async () => {
  assert.deepEqual(await keyClasses(['', ' '], unreadable), { classes: [] });
  assert.deepEqual(await keyClasses([' * ', '*'], unreadable), { classes: ['*'] });
});

test("'*' stands alone; unknown labels are named, at most five", async () => {
  assert.deepEqual(await keyClasses(['*', 'dog'], catalog), { problem: '"*" (all classes) stands alone' });
  assert.deepEqual(await keyClasses(['person', 'unicorn'], catalog), { problem: 'unknown class "unicorn" (not in the model catalog)' });
  const many = await keyClasses(['a', 'b', 'c', 'd', 'e', 'f', 'g'], catalog);
  assert.deepEqual(many, { problem: 'unknown class "a", "b", "c", "d", "e" and 2 more (not in the model catalog)' });
});
