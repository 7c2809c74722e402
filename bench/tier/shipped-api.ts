/**
 * The benches' service as users run it: `recog serve` (the same runServer(loadConfig()) as
 * `npm start`) in a process of its own, an organisation and a key made with the `recog`
 * CLI as a user makes them, and the load generator forked into a process of its own.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../test/helpers/fixtures.js';
import { freePort } from '../../test/helpers/local-server.js';
import { getJson, startChild, type Child } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const run$ = promisify(execFile);

/**
 * `npm run build`, as `npm start` runs it before starting (incremental: seconds when nothing
 * changed), then the compiled CLI: the service exactly as `npm start` serves it.
 */
async function apiCommand(): Promise<{ args: string[]; label: string }> {
  await run$('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT });
  return { args: ['bin/recog.js', 'serve'], label: 'recog serve, compiled by npm run build as npm start does (bin/recog.js → dist/)' };
}

export interface ShippedApi {
  child: Child;
  url: string;
  key: string;
  /** How it was started, for the bench's output. */
  label: string;
  /** performance.now() when it was spawned: where a profile of it begins. */
  spawnedAt: number;
}

/**
 * Starts the API with the environment of this process plus `env`, its DATA_DIR under
 * `work`, and waits until /readyz says every dependency answers. Node flags for the API
 * alone (a GC setting under trial, --cpu-prof) come from `nodeArgsVariable` and
 * `extraNodeArgs` and are named in the label. Stopping it is the caller's (child.stop).
 */
export async function startShippedApi(work: string, env: Record<string, string>, nodeArgsVariable: string, extraNodeArgs: string[] = []): Promise<ShippedApi> {
  const dataDir = path.join(work, 'data');
  const port = await freePort();
  const apiEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir };
  await mkdir(dataDir, { recursive: true });
  // The embedded PostgreSQL may run as another user (as root: `postgres`): it must reach DATA_DIR.
  await chmod(work, 0o711);
  await chmod(dataDir, 0o755);
  const command = await apiCommand();
  const nodeArgs = [...(process.env[nodeArgsVariable] ?? '').split(' ').filter(Boolean), ...extraNodeArgs];
  command.args.unshift(...nodeArgs);
  if (nodeArgs.length > 0) command.label += ` with node ${nodeArgs.join(' ')}`;
  const spawnedAt = performance.now();
  const { child } = await startChild('the API', process.execPath, command.args, { cwd: REPO_ROOT, env: apiEnv }, (): Promise<true | undefined> =>
    getJson(`http://127.0.0.1:${port}/readyz`).then((r) => (r ? true : undefined)),
  );
  try {
    const cli = async (args: string[]): Promise<Record<string, unknown>> =>
      JSON.parse((await run$(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--json'], { cwd: REPO_ROOT, env: apiEnv })).stdout) as Record<string, unknown>;
    const org = `bench-${process.pid}-${Date.now()}`;
    await cli(['orgs', 'create', org]);
    const key = (await cli(['keys', 'create', '--org', org, '--name', 'bench', '--rate-limit', '1000000', '--quota', '100000000'])).key as string;
    return { child, url: `http://127.0.0.1:${port}/v1/cv/requests/sync`, key, label: command.label, spawnedAt };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/** The forked load generator (tier/load-generator.ts), driven by messages, each answered before the next is sent. */
export async function forkLoadGenerator(files: string[], callers: number): Promise<{ child: ChildProcess; ask<T>(message: object): Promise<T>; close(): void }> {
  const child = fork(path.join(here, 'load-generator.ts'), [], { cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = <T>(message: object): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the load generator exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m as T);
      });
      child.send(message);
    });
  await ask({ type: 'setup', photos: files, callers });
  return { child, ask, close: () => child.connected && child.disconnect() };
}
