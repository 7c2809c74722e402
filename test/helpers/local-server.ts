/**
 * A server binary of the test's own (MinIO, Mailpit) as a child process on loopback: started,
 * then awaited until its health URL answers 200 (or it exits, with its last output in the
 * error), and killed for an outage or at the end. Also the suite's one way to pick a free
 * loopback port and to see whether something listens on one.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually.js';

/**
 * `name` as the repo's script builds it (`scripts/<name>.sh`, into `$binDirEnv` or the
 * project's cache), or a reason to skip outside CI; under CI=true a missing one throws.
 */
export function findBinary(name: string, label: string, binDirEnv: string): { bin: string } | { skip: string } {
  const dir = process.env[binDirEnv] ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'recognition-service', 'bin');
  const bin = path.join(dir, name);
  if (existsSync(bin)) return { bin };
  const message = `${label} not installed in ${dir}: run scripts/${name}.sh`;
  if (process.env.CI === 'true') throw new Error(message);
  return { skip: message };
}

/** A loopback port free right now, for a server the test starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts a TCP connection on the loopback port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

export interface LocalServer {
  child: ChildProcess;
  /** What it printed, for error messages. */
  output(): string;
}

export async function startLocalServer(
  name: string,
  command: { bin: string; args: string[]; env?: SpawnOptions['env'] },
  readyUrl: string,
  timeoutMs: number,
): Promise<LocalServer> {
  let output = '';
  const child = spawn(command.bin, command.args, { env: command.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${output.slice(-2000)}`))));
  exited.catch(() => {});
  await Promise.race([
    eventually(async () => (await fetch(readyUrl)).status === 200, { what: `${name} ready`, timeoutMs }).catch((err: Error) => {
      throw new Error(`${err.message}: ${output.slice(-2000)}`);
    }),
    exited,
  ]);
  return { child, output: () => output };
}

/** Kills it (SIGKILL: an outage, not a shutdown) and waits for the exit. */
export async function killLocalServer(server: LocalServer | undefined): Promise<void> {
  const c = server?.child;
  if (!c || c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((resolve) => c.once('exit', resolve));
  c.kill('SIGKILL');
  await gone;
}
