/** Which namespaces the operator watches: the flag, then $WATCH_NAMESPACES, else every namespace. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchNamespaces } from '../../src/cli/commands/operator.js';
import { watchScopes } from '../../src/operator/operator.js';

test('WATCH_NAMESPACES as the chart sets it: a comma-separated list, blanks and repeats dropped', () => {
  assert.deepEqual(watchNamespaces({}, { WATCH_NAMESPACES: 'team-a, team-b,,team-a' }), ['team-a', 'team-b']);
});

test('the flag wins over the environment', () => {
  assert.deepEqual(watchNamespaces({ watchNamespaces: 'x' }, { WATCH_NAMESPACES: 'team-a' }), ['x']);
});

test('unset or empty: every namespace', () => {
  assert.equal(watchNamespaces({}, {}), undefined);
  assert.equal(watchNamespaces({}, { WATCH_NAMESPACES: ' , ' }), undefined);
  assert.deepEqual(watchScopes(undefined), [undefined]);
  assert.deepEqual(watchScopes([]), [undefined]);
});

test('one informer scope per watched namespace', () => {
  assert.deepEqual(watchScopes(['a', 'b', 'a', ' ']), ['a', 'b']);
});
