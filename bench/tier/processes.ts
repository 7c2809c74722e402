/**
 * The tier bench's child processes: started with their output piped (as a container
 * runtime would take it), awaited until they say they serve, stopped by their own id, and
 * their CPU time read from the OS (/proc/<pid>/stat), so nothing in the measured process
 * has to cooperate.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

/** Clock ticks per second of /proc's CPU times (USER_HZ); 100 on every Linux we run on. */
const TICKS_PER_SECOND = ((): number => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/**
 * The CPU time (user + system) a process has used so far, in ms: every thread of it,
 * ended ones included (its children are not). Resolution is one tick (10 ms), which over
 * a round of hundreds of requests is well under 0.1 ms per request.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND; // utime, stime
}

/** The CPU of every process whose command name is `name` (e.g. postgres), in ms; 0 where /proc has none. */
export function commandCpuMs(name: string): number {
  let ms = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name) ms += processCpuMs(Number(pid));
    } catch {
      // ended meanwhile
    }
  }
  return ms;
}

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** The last 8 kB of its output (stdout and stderr), for errors. */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `command` and resolves once `ready(output so far)` returns a value (polled every
 * 250 ms, so an HTTP check works too); rejects if it exits first or
 * takes longer than `timeoutMs`.
 */
export async function startChild<T>(
  name: string,
  command: string,
  args: string[],
  options: SpawnOptions,
  ready: (output: string) => T | undefined | Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<{ child: Child; value: T }> {
  const proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-8192);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  let exited = proc.exitCode !== null || proc.signalCode !== null;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => ((exited = true), resolve())));
  const child: Child = {
    name,
    process: proc,
    pid: proc.pid ?? -1,
    tail: () => output,
    async stop(graceMs = 10_000) {
      if (exited) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`${name} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${output}`);
      if (Date.now() > deadline) throw new Error(`${name} not ready within ${timeoutMs} ms:\n${output}`);
      const value = await Promise.resolve(ready(output)).catch(() => undefined);
      if (value !== undefined) return { child, value };
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await child.stop(2000);
    throw err;
  }
}

/** Whether something accepts TCP connections at host:port (within 1 s). */
export function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** GET `url`; the parsed JSON body when the status is 200, else undefined. */
export async function getJson<T>(url: string): Promise<T | undefined> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  if (res.status !== 200) {
    await res.body?.cancel();
    return undefined;
  }
  return (await res.json()) as T;
}

/**
 * A process's CPU time so far by kind of thread, in ms, from the names Node, libuv, libvips
 * and V8 give their threads (/proc/<pid>/task; empty where /proc has none). Threads that
 * ended are not counted, so read it over a window in which the pools stay up.
 */
export function threadCpuMs(pid: number | 'self'): Map<string, number> {
  const kinds = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return kinds;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      kinds.set(name, (kinds.get(name) ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND);
    } catch {
      // ended meanwhile
    }
  }
  return kinds;
}
