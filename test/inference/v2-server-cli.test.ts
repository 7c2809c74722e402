/**
 * `recog inference-server` as a real process: it serves, answers SIGTERM with a clean
 * exit, and when it is killed (SIGKILL) mid-request the API's gRPC client reports
 * UNAVAILABLE, then recovers by itself once a new process listens on the same port.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { InferenceError, type Tensor } from '../../src/inference/backend.js';
import { prepareImage } from '../../src/inference/preprocess.js';
import { TritonBackend } from '../../src/inference/triton/triton-backend.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';

interface Running {
  child: ChildProcess;
  grpcPort: number;
  httpPort: number;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the command and waits for its "listening" line (ports chosen by the OS unless given). */
function startCli(grpcPort = 0): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'inference-server', '--host', '127.0.0.1', '--port', String(grpcPort), '--http-port', '0', '--threads', '1'],
    { cwd: REPO_ROOT, env: { ...process.env, MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'), SHUTDOWN_TIMEOUT_MS: '10000' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`inference-server did not start within 120 s:\n${log}`));
    }, 120_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      const m = /gRPC on 127\.0\.0\.1:(\d+), HTTP on 127\.0\.0\.1:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ child, grpcPort: Number(m[1]), httpPort: Number(m[2]), stderr: () => log, exited });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`inference-server exited (${code ?? signal}) before listening:\n${log}`));
    });
  });
}

describe('recog inference-server (a separate process)', () => {
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  test('serves health and inference; SIGTERM: graceful stop, exit 0', async () => {
    const s = await startCli();
    children.push(s.child);
    assert.equal((await fetch(`http://127.0.0.1:${s.httpPort}/v2/health/ready`)).status, 200);
    const triton = new TritonBackend({ url: `127.0.0.1:${s.grpcPort}`, modelName: 'centernet' });
    try {
      await triton.start();
      const prepared = await prepareImage(readFixture('camera.png'), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
      const out = await triton.infer([{ name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: prepared.tensor }]);
      assert.deepEqual(out.get('detections')!.shape, [1, 100, 6]);
    } finally {
      await triton.close();
    }
    s.child.kill('SIGTERM');
    const { code } = await s.exited;
    assert.equal(code, 0, s.stderr());
    assert.match(s.stderr(), /SIGTERM: shutting down/);
    assert.match(s.stderr(), /v2 inference server stopped/);
  });

  test('killed mid-request: UNAVAILABLE; a new process on the same port: the same client recovers', async () => {
    const first = await startCli();
    children.push(first.child);
    const triton = new TritonBackend({ url: `127.0.0.1:${first.grpcPort}`, modelName: 'centernet' });
    try {
      await triton.start();
      const prepared = await prepareImage(readFixture('basketball1.png'), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
      const input: Tensor = { name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: prepared.tensor };
      const expected = await triton.infer([input]);

      const pending = triton.infer([input]).then(() => undefined, (e: unknown) => e);
      first.child.kill('SIGKILL'); // whether or not the request got there, the process is gone
      await first.exited;
      const err = await pending;
      assert.ok(err instanceof InferenceError, `expected an InferenceError, got ${String(err)}`);
      assert.equal(err.code, 'UNAVAILABLE', err.message);
      assert.equal(await triton.ready(), false);

      const second = await startCli(first.grpcPort);
      children.push(second.child);
      await eventually(() => triton.ready(), { what: 'ready again without a new client' });
      const again = await triton.infer([input]);
      assert.deepEqual([...(again.get('detections')!.data as Float32Array)], [...(expected.get('detections')!.data as Float32Array)]);
      second.child.kill('SIGTERM');
      assert.equal((await second.exited).code, 0);
    } finally {
      await triton.close();
    }
  });
});
