import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterByClasses, runBounded, secondsUntilNextMonthUtc } from '../../src/recognition/service.js';

test('runBounded never runs more than the limit at once and runs every task', async () => {
  let running = 0;
  let peak = 0;
  const done: number[] = [];
  await runBounded(10, 3, async (i) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setImmediate(r));
    done.push(i);
    running--;
  });
  assert.equal(peak, 3);
  assert.deepEqual(done.sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('filterByClasses keeps only mapped labels; "*" keeps all', () => {
  const d = (label: string) => ({ label, external_id: label, confidence: 0.9, bounding_box: { x: 0, y: 0, width: 1, height: 1 } });
  const all = [d('person'), d('dog'), d('person')];
  assert.deepEqual(filterByClasses(all, ['*']), all);
  assert.deepEqual(filterByClasses(all, ['person']).map((x) => x.label), ['person', 'person']);
  assert.deepEqual(filterByClasses(all, ['cat']), []);
});

test('secondsUntilNextMonthUtc counts to the first of next month, UTC', () => {
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-01-31T23:59:00Z')), 60);
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-12-31T23:00:00Z')), 3600);
});
