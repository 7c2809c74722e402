/**
 * A model repository whose model and version directories are symbolic links (how
 * deployments often swap model versions, and what a ConfigMap or a Kubernetes volume
 * mount looks like) is served as Triton serves it: links followed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { discoverModels } from '../../src/inference/v2-server/model-repository.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const REAL_MODEL = path.join(REPO_ROOT, 'model-repository', 'centernet');
let dir: string;
let repository: string;
let server: V2Server | undefined;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'recog-symlinked-repo-'));
  // store/centernet-2026 holds the config and links its version 1 to the real weights;
  // repository/centernet links to store/centernet-2026.
  const release = path.join(dir, 'store', 'centernet-2026');
  await mkdir(release, { recursive: true });
  await copyFile(path.join(REAL_MODEL, 'config.pbtxt'), path.join(release, 'config.pbtxt'));
  await symlink(path.join(REAL_MODEL, '1'), path.join(release, '1'));
  repository = path.join(dir, 'repository');
  await mkdir(repository);
  await symlink(release, path.join(repository, 'centernet'));
  // A link to nowhere is skipped, not an error.
  await symlink(path.join(dir, 'store', 'missing'), path.join(repository, 'dangling'));
});

after(async () => {
  await server?.close({ graceMs: 1_000 });
  await rm(dir, { recursive: true, force: true });
});

test('discovery follows links to model and version directories', async () => {
  const models = await discoverModels(repository);
  assert.deepEqual(models.map((m) => [m.config.name, m.version]), [['centernet', '1']]);
  assert.equal(models[0].modelPath, path.join(repository, 'centernet', '1', models[0].config.defaultModelFilename));
});

test('the v2 server serves a linked model and lists it READY in the repository index', async () => {
  server = await startV2Server({
    modelRepository: repository,
    host: '127.0.0.1',
    grpcPort: 0,
    httpPort: 0,
    createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
  });
  const base = `http://127.0.0.1:${server.httpPort}`;
  assert.equal((await fetch(`${base}/v2/models/centernet/ready`)).status, 200);
  const index = (await (await fetch(`${base}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as Array<{ name: string; state?: string }>;
  assert.deepEqual(index.map((e) => [e.name, e.state]), [['centernet', 'READY']]);
});
