import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { register } from '../../src/cli/commands/model.js';
import { runModelPrepare } from '../../tools/model/prepare-cli.js';

const roots: string[] = [];
after(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

test('recog model prepare builds the repository, then reports it up to date', async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'recog-model-cmd-'));
  roots.push(root);
  const config = { modelRepository: path.join(root, 'repo'), modelName: 'centernet' };
  const lines: string[] = [];
  const first = await runModelPrepare(config, { cacheDir: null, out: (l) => lines.push(l) });
  assert.match(lines[0], /converted in \d+ ms/);
  assert.ok(lines.some((l) => l.includes(first.modelPath)));
  assert.ok((await stat(first.modelPath)).isFile());
  lines.length = 0;
  const second = await runModelPrepare(config, { cacheDir: null, out: (l) => lines.push(l) });
  assert.equal(second.upToDate, true);
  assert.match(lines[0], /up to date/);
  lines.length = 0;
  await runModelPrepare(config, { cacheDir: null, force: true, out: (l) => lines.push(l) });
  assert.match(lines[0], /converted/);
});

test('the command is registered as `model prepare [--force]`', () => {
  const program = new Command('recog');
  register(program);
  const prepare = program.commands.find((c) => c.name() === 'model')?.commands.find((c) => c.name() === 'prepare');
  assert.ok(prepare, 'model prepare exists');
  assert.ok(prepare.options.some((o) => o.long === '--force'));
});
