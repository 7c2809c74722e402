import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadCatalog } from '../../src/models/catalog.js';
import { defaultModelCacheDir, prepareModel } from '../../tools/model/prepare.js';
import { parseTritonConfig } from '../../src/models/triton-config.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

describe('prepareModel', () => {
  let root: string;
  let cacheDir: string;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recog-prepare-'));
    cacheDir = path.join(root, 'cache');
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('builds a Triton model repository, then does nothing while it is up to date', async () => {
    const repository = path.join(root, 'repo-a');
    const first = await prepareModel({ repository, cacheDir });
    assert.equal(first.source, 'converted');
    assert.equal(first.upToDate, false);
    assert.equal(first.modelDir, path.join(repository, 'centernet'));
    assert.equal(first.modelPath, path.join(repository, 'centernet', '1', 'model.onnx'));
    assert.ok((await stat(first.modelPath)).size > 1_000_000);

    const config = parseTritonConfig(await readFile(first.configPath, 'utf8'));
    assert.equal(config.name, 'centernet');
    assert.equal(config.platform, 'onnxruntime_onnx');

    const catalog = await loadCatalog(first.catalogPath);
    assert.deepEqual(catalog.model, { name: 'centernet', version: '1' });
    assert.equal(catalog.classes.length, 80);
    assert.deepEqual(catalog.classes[0], { index: 0, label: 'person', external_id: 'coco:1' });
    assert.deepEqual(catalog.classes[79], { index: 79, label: 'toothbrush', external_id: 'coco:90' });
    assert.equal(new Set(catalog.classes.map((c) => c.external_id)).size, 80);
    assert.equal(catalog.classes.find((c) => c.label === 'dining table')?.external_id, 'coco:67');

    const mtime = (await stat(first.modelPath)).mtimeMs;
    const second = await prepareModel({ repository, cacheDir });
    assert.equal(second.upToDate, true);
    assert.equal(second.source, 'up-to-date');
    assert.equal((await stat(first.modelPath)).mtimeMs, mtime, 'the model file was not rewritten');
    // Nothing but the model folder in the repository (Triton loads every folder in it).
    assert.deepEqual(await readdir(repository), ['centernet']);
    assert.deepEqual((await readdir(root)).filter((n) => n.includes('.tmp-')), []);
  });

  test('a second repository on the same machine is copied from the cache, byte for byte', async () => {
    const a = await prepareModel({ repository: path.join(root, 'repo-a'), cacheDir });
    const b = await prepareModel({ repository: path.join(root, 'repo-b'), cacheDir });
    assert.equal(b.source, 'cache');
    assert.equal(b.hash, a.hash);
    assert.ok((await readFile(a.modelPath)).equals(await readFile(b.modelPath)));
  });

  test('a damaged or stale model is rebuilt; --force rebuilds', async () => {
    const repository = path.join(root, 'repo-c');
    const p = await prepareModel({ repository, cacheDir: null });
    await writeFile(p.modelPath, '');
    const again = await prepareModel({ repository, cacheDir: null });
    assert.equal(again.source, 'converted');
    assert.ok((await stat(p.modelPath)).size > 1_000_000);

    await writeFile(path.join(p.modelDir, '.prepared.json'), JSON.stringify({ hash: 'old' }));
    assert.equal((await prepareModel({ repository, cacheDir: null })).upToDate, false);
    assert.equal((await prepareModel({ repository, cacheDir: null, force: true })).source, 'converted');
  });

  test("leftovers of a killed run are removed and never mistaken for a model", async () => {
    const repository = path.join(root, 'repo-d');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // a process that has exited
    const leftover = path.join(root, `.repo-d.tmp-${dead}-abcd`);
    await mkdir(path.join(leftover, '1'), { recursive: true });
    await writeFile(path.join(leftover, '1', 'model.onnx'), 'half a model');
    const p = await prepareModel({ repository, cacheDir });
    assert.equal(p.upToDate, false);
    await assert.rejects(stat(leftover), { code: 'ENOENT' });
  });

  test('npm run model:prepare killed mid-way leaves the previous model whole', { timeout: 120_000 }, async () => {
    const repository = path.join(root, 'repo-k');
    const good = await prepareModel({ repository, cacheDir: null });
    const before = await readFile(good.modelPath);
    for (const delayMs of [0, 400]) {
      // A forced rebuild, killed once it has started converting (or shortly after).
      const child = spawn(process.execPath, ['--import', 'tsx', 'tools/model/prepare-cli.ts', '--force'], {
        cwd: REPO_ROOT,
        env: { ...process.env, MODEL_REPOSITORY: repository, XDG_CACHE_HOME: path.join(root, 'kill-cache') },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      await new Promise<void>((resolve) => {
        child.stderr.on('data', (d: Buffer) => {
          if (d.toString().includes('converting')) setTimeout(resolve, delayMs);
        });
        child.on('exit', () => resolve());
      });
      child.kill('SIGKILL');
      await exited;
      // Whatever the moment, the model folder is whole: the old files or a complete new set.
      const config = parseTritonConfig(await readFile(good.configPath, 'utf8'));
      assert.equal(config.name, 'centernet');
      assert.ok((await readFile(good.modelPath)).equals(before), 'model.onnx is complete');
      await loadCatalog(good.catalogPath);
    }
    // The next run cleans the killed runs' staging folders up.
    await prepareModel({ repository, cacheDir: null });
    assert.deepEqual((await readdir(root)).filter((n) => n.startsWith('.repo-k.tmp-')), []);
    assert.deepEqual(await readdir(repository), ['centernet']);
  });

  test('another model name gets its own folder and config name', async () => {
    const p = await prepareModel({ repository: path.join(root, 'repo-e'), modelName: 'coco_detector', cacheDir });
    assert.equal(parseTritonConfig(await readFile(p.configPath, 'utf8')).name, 'coco_detector');
    assert.equal((await loadCatalog(p.catalogPath)).model.name, 'coco_detector');
    await assert.rejects(prepareModel({ repository: path.join(root, 'repo-f'), modelName: '../x', cacheDir }), /invalid model name/);
  });

  test('a missing source model is a clear error, and nothing is left behind', async () => {
    const repository = path.join(root, 'repo-g');
    await assert.rejects(
      prepareModel({ repository, cacheDir: null, source: { json: path.join(root, 'nope.json'), bin: path.join(root, 'nope.bin') } }),
      /cannot read the source model .*nope\.json.*npm ci/,
    );
    await assert.rejects(stat(repository), { code: 'ENOENT' });
  });

  test('a corrupt graph fails the conversion without touching the prepared model', async () => {
    const repository = path.join(root, 'repo-a');
    const good = await prepareModel({ repository, cacheDir });
    const before = await readFile(good.modelPath);
    const json = path.join(root, 'bad.json');
    const bin = path.join(root, 'bad.bin');
    await writeFile(json, '{"modelTopology": ');
    await writeFile(bin, '');
    await assert.rejects(prepareModel({ repository, cacheDir, source: { json, bin } }), /cannot read the graph model .*bad\.json/);
    assert.ok((await readFile(good.modelPath)).equals(before));
    assert.equal((await prepareModel({ repository, cacheDir })).upToDate, true);
  });

  test('the cache lives under XDG_CACHE_HOME, else ~/.cache', () => {
    assert.equal(defaultModelCacheDir({ XDG_CACHE_HOME: '/x/cache' }, '/home/u'), '/x/cache/recognition-service/models');
    assert.equal(defaultModelCacheDir({}, '/home/u'), '/home/u/.cache/recognition-service/models');
    assert.equal(defaultModelCacheDir({ XDG_CACHE_HOME: 'relative' }, '/home/u'), '/home/u/.cache/recognition-service/models');
  });
});
