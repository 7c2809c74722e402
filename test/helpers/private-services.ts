/**
 * PostgreSQL and Redis servers private to one test, in a temp dir on free loopback ports,
 * for tests that stop, kill and restart them (the shared test servers are never touched).
 * Debian's binaries: /usr/lib/postgresql/<v>/bin and redis-server; as root, PostgreSQL runs
 * as the `postgres` user.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './eventually.js';
import { freePort, portOpen } from './local-server.js';

const run = promisify(execFile);

export async function pgBinDir(): Promise<string | null> {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = (await readdir(root)).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(a) - Number(b));
  const v = versions.at(-1);
  return v === undefined ? null : path.join(root, v, 'bin');
}

export function redisServerAvailable(): boolean {
  return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].some((p) => existsSync(p));
}

/** Why the private servers cannot run here, or null. Under CI=true a missing tool is a failure, not a skip. */
export async function privateServicesMissing(): Promise<string | null> {
  const missing: string[] = [];
  if ((await pgBinDir()) === null) missing.push('PostgreSQL server binaries (apt-get install postgresql)');
  if (!redisServerAvailable()) missing.push('redis-server (apt-get install redis-server)');
  if (missing.length === 0) return null;
  const why = `missing: ${missing.join(', ')}; scripts/services.sh start installs them`;
  if (process.env.CI === 'true') throw new Error(why);
  return why;
}

const asRoot = process.getuid?.() === 0;

async function asPostgres(cmd: string, args: string[]): Promise<{ stdout: string }> {
  return asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:port/postgres */
  url: string;
  port: number;
  start(): Promise<void>;
  /** A clean, fast shutdown (clients get 57P01). */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = await pgBinDir();
  if (bin === null) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-pg-'));
  await chmod(dir, 0o755);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: g } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(g.trim()));
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  await asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale']);
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=100 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pg: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start', '-o', options]);
    },
    async stop() {
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async destroy() {
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}

export interface PrivateRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  /** SIGKILL: the connection drops without a goodbye. */
  kill(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
      await eventually(() => portOpen(port), { what: 'the private redis-server accepting connections', intervalMs: 50 });
    },
    async kill() {
      const c = child;
      if (c === undefined || c.exitCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
    async destroy() {
      await redis.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}
