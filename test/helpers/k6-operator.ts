/**
 * What Grafana's k6 operator does with a TestRun, done with the real k6 on loopback, for the
 * tests that cannot have the operator itself (it cannot be obtained on this machine):
 * - the initializer: `k6 archive /test/<file> -e NAME=value … -O … <archive args>` then
 *   `k6 inspect --execution-requirements` (the operator reads maxVUs and duration from it);
 * - runner i of N: `k6 run --quiet --execution-segment=… --execution-segment-sequence=…
 *   <spec.arguments> /test/<file> --address=… --paused --tag instance_id=i
 *   --tag testrun_name=<name>`, with the pod's environment (runner.env, Secret values
 *   resolved);
 * - the starter: once every runner answers GET /v1/status, PATCH /v1/status
 *   {paused: false} to each.
 * The commands follow the operator's source (its runner, initializer, segmentation and
 * starter builders) and public documentation.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { EnvVar, TestRun } from '../../load-tests/tools/testrun/render.js';
import { eventually } from './eventually.js';

/** The operator's execution segment of runner `index` (1-based) of `total`. */
export function segmentFlags(index: number, total: number): string[] {
  const point = (i: number) => (i === 0 ? '0' : i === total ? '1' : `${i}/${total}`);
  const sequence = Array.from({ length: total + 1 }, (_, i) => point(i)).join(',');
  return [`--execution-segment=${point(index - 1)}:${point(index)}`, `--execution-segment-sequence=${sequence}`];
}

/** spec.arguments as the operator splits it: on single spaces, empty parts dropped. */
export function splitArguments(args: string): string[] {
  return args.split(' ').map((a) => a.trim()).filter((a) => a !== '');
}

/** The runner's `k6 run` arguments; `scriptDir` stands for the /test mount. */
export function runnerArgs(testRun: TestRun, index: number, scriptDir: string, address: string): string[] {
  const { spec, metadata } = testRun;
  return [
    'run',
    '--quiet',
    ...(spec.parallelism > 1 ? segmentFlags(index, spec.parallelism) : []),
    ...splitArguments(spec.arguments),
    `${scriptDir}/${spec.script.configMap.file}`,
    `--address=${address}`,
    '--paused',
    '--tag',
    `instance_id=${index}`,
    '--tag',
    `testrun_name=${metadata.name}`,
  ];
}

/**
 * The container's environment from runner.env: plain values as they are, secretKeyRef from
 * `secrets` (name → key → value), as the kubelet resolves them. A missing non-optional key
 * is an error, as it is for the kubelet.
 */
export function resolveEnv(env: readonly EnvVar[], secrets: Record<string, Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom) {
      const { name, key, optional } = e.valueFrom.secretKeyRef;
      const v = secrets[name]?.[key];
      if (v !== undefined) out[e.name] = v;
      else if (!optional) throw new Error(`secret ${name} has no key ${key} (needed by ${e.name})`);
    }
  }
  return out;
}

/** The initializer's `k6 archive` arguments: every runner.env entry as -e, then the archive args. */
export function initializerArchiveArgs(testRun: TestRun, scriptDir: string, env: Record<string, string>, out: string): string[] {
  const { spec } = testRun;
  // Only -e/--env and options `k6 archive` takes go through; outputs (-o) are run-only.
  const args = splitArguments(spec.arguments);
  const archiveArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-o' || args[i] === '--out') i++;
    else archiveArgs.push(args[i]);
  }
  return [
    'archive',
    `${scriptDir}/${spec.script.configMap.file}`,
    ...spec.runner.env.flatMap((e) => (env[e.name] !== undefined ? ['-e', `${e.name}=${env[e.name]}`] : [])),
    '-O',
    out,
    ...archiveArgs,
  ];
}

export interface Runner {
  index: number;
  address: string;
  child: ChildProcess;
  exit: Promise<number | null>;
  output(): string;
}

/** Starts one paused runner, in its own process group (killed with kill()). */
export function startRunner(k6: string, index: number, args: string[], env: Record<string, string>, address: string): Runner {
  let output = '';
  const child = spawn(k6, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { index, address, child, exit, output: () => output };
}

export function killRunner(r: Runner): void {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  try {
    process.kill(-r.child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** What the starter does: wait for every runner's REST API, then un-pause each. */
export async function startAll(runners: readonly Runner[]): Promise<void> {
  for (const r of runners) {
    await eventually(
      async () => {
        if (r.child.exitCode !== null) throw new Error(`runner ${r.index} exited (${r.child.exitCode}): ${r.output()}`);
        return (await fetch(`http://${r.address}/v1/status`)).status === 200;
      },
      { what: `runner ${r.index} ready`, timeoutMs: 60_000, intervalMs: 100 },
    );
  }
  const body = JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } });
  await Promise.all(
    runners.map(async (r) => {
      const res = await fetch(`http://${r.address}/v1/status`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body });
      if (res.status !== 200) throw new Error(`runner ${r.index}: PATCH /v1/status answered ${res.status}: ${await res.text()}`);
    }),
  );
}
