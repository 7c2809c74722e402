/**
 * The Python side of the suite: the environment scripts/python-env.sh builds (real Triton
 * inside nvidia-pytriton, tritonclient, ONNX Runtime), the real Triton process serving the
 * prepared model (test/triton/pytriton_server.py), and the tritonclient conformance script.
 * Outside CI a missing environment skips the tests that need it, naming the script to run;
 * under CI=true it fails them (.ci/run builds it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareImage } from '../../src/inference/preprocess.js';
import { REPO_ROOT, readFixture } from './fixtures.js';
import { freePort } from './local-server.js';
import { eventually } from './eventually.js';

export const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');

/** The venv's python, or a skip reason (outside CI). Throws under CI when missing. */
export function pythonEnv(): { python: string } | { skip: string } {
  let dir: string;
  try {
    dir = execFileSync(path.join(REPO_ROOT, 'scripts', 'python-env.sh'), ['--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    dir = '';
  }
  if (dir) return { python: path.join(dir, 'bin', 'python') };
  const why = 'the Python test environment (real Triton, tritonclient) is missing: run scripts/python-env.sh (about a minute, once)';
  if (process.env.CI === 'true') throw new Error(why);
  return { skip: why };
}

export interface RealTriton {
  grpcPort: number;
  httpPort: number;
  /** host:port for TRITON_URL. */
  grpcAddress: string;
  log(): string;
  /** SIGTERM (PyTriton stops tritonserver), then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts real Triton serving the prepared model (python backend, ONNX Runtime inside) on
 * loopback and waits until it serves it. The process leads its own group, so that a stop
 * or a failed test never leaves a tritonserver behind.
 */
export async function startRealTriton(python: string, ports: { grpcPort?: number; httpPort?: number; metricsPort?: number; threads?: number } = {}): Promise<RealTriton> {
  const grpcPort = ports.grpcPort ?? (await freePort());
  const httpPort = ports.httpPort ?? (await freePort());
  const child = spawn(
    python,
    [path.join(REPO_ROOT, 'test', 'triton', 'pytriton_server.py'), '--model-repository', MODEL_REPOSITORY, '--grpc-port', String(grpcPort), '--http-port', String(httpPort), '--threads', String(ports.threads ?? 1), '--metrics-port', String(ports.metricsPort ?? 0)],
    { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTRITON_HOME: path.join(os.tmpdir(), 'pytriton-tests') } },
  );
  let out = '';
  const { killGroup, exited, stop, stderr } = processGroup(child);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup('SIGKILL');
      reject(new Error(`real Triton did not serve the model within 180 s:\n${stderr()}`));
    }, 180_000);
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('"ready": true')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`real Triton exited before serving:\n${stderr()}`));
    });
  });
  return { grpcPort, httpPort, grpcAddress: `127.0.0.1:${grpcPort}`, log: stderr, stop };
}

/**
 * A Triton process that leads its own group (spawned detached): its stderr's tail, its exit,
 * signals to the whole group, and a stop that sends SIGTERM, SIGKILL after 30 s, then SIGKILL
 * again for the backend stubs that outlive their parent; once.
 */
function processGroup(child: ChildProcess) {
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      killGroup('SIGKILL');
    })());
  return { killGroup, exited, stop, stderr: () => err };
}

/**
 * The tritonserver binary of the environment run as it is, on a model repository of python
 * backend models (what PyTriton runs, without PyTriton): its own flags, its own model
 * control. The backend directory is made under `dir` from the package's python backend and
 * the stub built for this interpreter. Waits until Triton is ready (its models loaded).
 */
export async function startTritonServer(
  python: string,
  repository: string,
  dir: string,
  args: string[],
  http: { address?: string; port?: number } = {},
): Promise<RealTriton & { httpUrl: string }> {
  const info = JSON.parse(
    execFileSync(python, ['-c', 'import json, os, sys, sysconfig, pytriton; print(json.dumps({"pkg": os.path.dirname(pytriton.__file__), "libdir": sysconfig.get_config_var("LIBDIR"), "py": f"{sys.version_info[0]}.{sys.version_info[1]}"}))'], { encoding: 'utf8' }),
  ) as { pkg: string; libdir: string; py: string };
  const server = path.join(info.pkg, 'tritonserver');
  const backend = path.join(dir, 'backends', 'python');
  mkdirSync(backend, { recursive: true });
  for (const f of ['libtriton_python.so', 'triton_python_backend_utils.py']) symlinkSync(path.join(server, 'backends', 'python', f), path.join(backend, f));
  symlinkSync(path.join(server, 'python_backend_stubs', info.py, 'triton_python_backend_stub'), path.join(backend, 'triton_python_backend_stub'));
  const [grpcPort, httpPort] = [await freePort(), http.port ?? (await freePort())];
  const httpAddress = http.address ?? '127.0.0.1';
  // libpython for the stub, and the CUDA runtime the package bundles (no GPU is used).
  const libs = [info.libdir, path.join(path.dirname(info.pkg), 'nvidia_pytriton.libs')];
  const child = spawn(
    path.join(server, 'bin', 'tritonserver'),
    [`--model-repository=${repository}`, `--backend-directory=${path.join(dir, 'backends')}`, `--http-port=${httpPort}`, `--grpc-port=${grpcPort}`, `--http-address=${httpAddress}`, '--grpc-address=127.0.0.1', '--allow-metrics=false', ...args],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PATH: `${path.dirname(python)}:${process.env.PATH}`, LD_LIBRARY_PATH: libs.join(':') } },
  );
  const { killGroup, exited, stop, stderr } = processGroup(child);
  const httpUrl = `http://${httpAddress}:${httpPort}`;
  try {
    await Promise.race([
      eventually(async () => (await fetch(`${httpUrl}/v2/health/ready`)).status === 200, { what: 'tritonserver ready', timeoutMs: 180_000 }),
      exited.then(() => Promise.reject(new Error(`tritonserver exited before it was ready:\n${stderr()}`))),
    ]);
  } catch (e) {
    killGroup('SIGKILL');
    throw e;
  }
  return { grpcPort, httpPort, httpUrl, grpcAddress: `127.0.0.1:${grpcPort}`, log: stderr, stop };
}

/** Runs a Python script of the environment and parses its JSON stdout. */
export function runPythonJson<T>(python: string, args: string[], timeoutMs = 300_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(python, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`${args[0]} exited ${code}:\n${err}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch (e) {
        reject(new Error(`${args[0]}: no JSON on stdout (${(e as Error).message}):\n${out.slice(0, 2000)}\n${err}`));
      }
    });
  });
}

/** One fixture preprocessed as the prepared model's input, written as raw UINT8 bytes for the Python scripts. */
export async function writeImageTensor(fixture: 'basketball1.png' | 'camera.png' | 'squirrel_cls.jpg', file: string): Promise<void> {
  const p = await prepareImage(readFixture(fixture), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
  writeFileSync(file, Buffer.from(p.tensor.buffer, p.tensor.byteOffset, p.tensor.byteLength));
}
