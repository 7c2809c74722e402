/**
 * Conformance with real Triton, judged by the official Python client: the same
 * tritonclient script (test/triton/conformance.py: gRPC, HTTP, streaming, the repository
 * extension) runs against real Triton (2.51 from nvidia-pytriton, serving the prepared
 * model through its python backend) and against `recog inference-server` as a process.
 * Every call real Triton answers, ours must answer with the same result; every call it
 * refuses, ours must refuse with the same status and message. The one allowed difference:
 * PyTriton's Triton cannot load a model back after unloading it (its model store is not a
 * file repository); ours can, which is more, not less.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { MODEL_REPOSITORY, pythonEnv, runPythonJson, startRealTriton, writeImageTensor, type RealTriton } from '../helpers/python-env.js';

interface CallResult {
  protocol: 'grpc' | 'http';
  call: string;
  ok: boolean;
  code?: string | null;
  message?: string;
  value?: unknown;
}

/** Calls where real Triton (under PyTriton) fails for its own reasons and ours may succeed. */
const OURS_MAY_DO_MORE = new Set(['grpc load_model', 'grpc is_model_ready after load', 'grpc infer after load']);
/** Calls whose value depends on the server's identity or model store, compared by hand below. */
const VALUE_BY_HAND = new Set(['grpc get_server_metadata', 'http get_server_metadata', 'grpc get_model_repository_index', 'http get_model_repository_index', 'grpc get_model_repository_index after unload', 'grpc get_trace_settings']);

const env = pythonEnv();

function startOurs(): Promise<{ child: ChildProcess; grpcPort: number; httpPort: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'inference-server', '--host', '127.0.0.1', '--port', '0', '--http-port', '0', '--threads', '1'], {
    cwd: REPO_ROOT,
    env: { ...process.env, MODEL_REPOSITORY },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inference-server did not start:\n${log}`)), 120_000);
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      log += c;
      const m = /gRPC on 127\.0\.0\.1:(\d+), HTTP on 127\.0\.0\.1:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ child, grpcPort: Number(m[1]), httpPort: Number(m[2]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`inference-server exited ${code}:\n${log}`)));
  });
}

/** Detection rows (rounded to 0.01 by the script) equal within one rounding step: two ONNX Runtime builds. */
function sameDetections(a: unknown, b: unknown, where: string): void {
  const x = a as number[][][];
  const y = b as number[][][];
  assert.equal(x.length, y.length, `${where}: images`);
  x.forEach((rows, i) => {
    assert.equal(rows.length, y[i].length, `${where}: detections of image ${i}: ${JSON.stringify(rows)} vs ${JSON.stringify(y[i])}`);
    rows.forEach((r, j) => r.forEach((v, k) => assert.ok(Math.abs(v - y[i][j][k]) <= 0.011, `${where}: image ${i} row ${j}: ${JSON.stringify(r)} vs ${JSON.stringify(y[i][j])}`)));
  });
}

function compareValues(name: string, ours: unknown, theirs: unknown): void {
  if (ours && typeof ours === 'object' && 'detections' in ours) {
    const o = ours as { shape: number[]; detections: unknown };
    const t = theirs as { shape: number[]; detections: unknown };
    assert.deepEqual(o.shape, t.shape, `${name}: output shape`);
    sameDetections(o.detections, t.detections, name);
    return;
  }
  assert.deepEqual(ours, theirs, `${name}: the same answer as real Triton`);
}

describe('tritonclient conformance: recog inference-server answers as real Triton does', { skip: 'skip' in env ? env.skip : false }, () => {
  const python = 'python' in env ? env.python : '';
  let triton: RealTriton | undefined;
  let ours: { child: ChildProcess; grpcPort: number; httpPort: number } | undefined;
  let dir = '';
  let theirs: CallResult[] = [];
  let mine: CallResult[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'conformance-'));
    const image = path.join(dir, 'basketball1.u8');
    await writeImageTensor('basketball1.png', image);
    const script = path.join(REPO_ROOT, 'test', 'triton', 'conformance.py');
    // One server at a time: the machine is small and both run the same model.
    triton = await startRealTriton(python);
    try {
      ({ results: theirs } = await runPythonJson<{ results: CallResult[] }>(python, [script, '--grpc-url', triton.grpcAddress, '--http-url', `127.0.0.1:${triton.httpPort}`, '--image-file', image, '--repository-calls']));
    } finally {
      await triton.stop();
    }
    // WRITE_TRITON_REFERENCE=1 refreshes the record docs/triton.md compares a real Triton with.
    if (process.env.WRITE_TRITON_REFERENCE === '1') await writeFile(path.join(REPO_ROOT, 'test/triton/reference/triton-2.51-pytriton-0.7.json'), `${JSON.stringify({ results: theirs }, null, 1)}\n`);
    ours = await startOurs();
    ({ results: mine } = await runPythonJson<{ results: CallResult[] }>(python, [script, '--grpc-url', `127.0.0.1:${ours.grpcPort}`, '--http-url', `127.0.0.1:${ours.httpPort}`, '--image-file', image, '--repository-calls']));
  });

  after(async () => {
    await triton?.stop();
    ours?.child.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('both runs made every call', () => {
    assert.ok(theirs.length >= 40, `calls against real Triton: ${theirs.length}`);
    assert.deepEqual(mine.map((r) => `${r.protocol} ${r.call}`), theirs.map((r) => `${r.protocol} ${r.call}`));
  });

  test('every call real Triton answers, ours answers the same', () => {
    const failures: string[] = [];
    for (const t of theirs) {
      const name = `${t.protocol} ${t.call}`;
      const o = mine.find((m) => `${m.protocol} ${m.call}` === name)!;
      if (t.ok && !o.ok) failures.push(`${name}: real Triton answers, ours fails ${o.code}: ${o.message}`);
      if (t.ok && o.ok && !VALUE_BY_HAND.has(name) && !OURS_MAY_DO_MORE.has(name)) {
        try {
          compareValues(name, o.value, t.value);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  test('every call real Triton refuses, ours refuses with the same status and message', () => {
    const failures: string[] = [];
    for (const t of theirs.filter((r) => !r.ok)) {
      const name = `${t.protocol} ${t.call}`;
      if (OURS_MAY_DO_MORE.has(name)) continue;
      const o = mine.find((m) => `${m.protocol} ${m.call}` === name)!;
      if (o.ok) failures.push(`${name}: real Triton refuses (${t.code}: ${t.message}), ours answers`);
      else if (o.code !== t.code || o.message !== t.message) failures.push(`${name}: real Triton ${t.code}: ${t.message} | ours ${o.code}: ${o.message}`);
    }
    assert.deepEqual(failures, []);
    // The case that started this: a batch above max_batch_size (9 real images, 28 MB).
    const over = mine.find((m) => m.call === 'infer batch 9 (over max_batch_size)' && m.protocol === 'grpc')!;
    assert.equal(over.code, 'INVALID_ARGUMENT');
    assert.equal(over.message, "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'centernet'");
  });

  test('server metadata, repository index and the unload/load cycle', () => {
    const get = (rs: CallResult[], name: string) => rs.find((r) => `${r.protocol} ${r.call}` === name)!;
    for (const p of ['grpc', 'http']) {
      const m = get(mine, `${p} get_server_metadata`).value as { name_set: boolean; version_set: boolean; extensions: string[] };
      const t = get(theirs, `${p} get_server_metadata`).value as { extensions: string[] };
      assert.ok(m.name_set && m.version_set, `${p}: name and version`);
      assert.ok(m.extensions.length > 0 && m.extensions.every((e) => t.extensions.includes(e)), `${p}: our extensions ${m.extensions} are Triton extensions (${t.extensions})`);
      assert.deepEqual(get(mine, `${p} get_model_repository_index`).value, { models: [{ name: 'centernet', state: 'READY' }] });
    }
    assert.deepEqual(get(mine, 'grpc get_model_repository_index after unload').value, { models: [{ name: 'centernet', state: 'UNAVAILABLE' }] });
    // Unloaded: NOT_FOUND "has no available versions" on both (checked above); ours loads it back.
    assert.equal(get(mine, 'grpc load_model').ok, true, JSON.stringify(get(mine, 'grpc load_model')));
    assert.equal(get(mine, 'grpc is_model_ready after load').value, true);
    compareValues('infer after load', get(mine, 'grpc infer after load').value, get(theirs, 'grpc infer batch 1').value);
  });
});
