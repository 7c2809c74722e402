/**
 * Splits a V8 CPU profile of the API's main thread (`node --cpu-prof`) into the
 * components of a request: each sample goes to the innermost frame on its stack that
 * belongs to a known library or module of ours (so a Buffer copy made by pg counts as
 * database, not as Node), and to "other" when none does. The benches scale the shares to
 * the main thread's CPU per request measured from the OS: a sampling profile taken on busy
 * cores also counts the time a thread waits to run again, so its absolute times are high
 * while its shares stay usable.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Child } from './processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Components in the order the benches print them; the first rule whose test matches a frame wins. */
export const COMPONENTS = [
  'decode and resize',
  'model input (tensor)',
  'inference hand-off',
  'gRPC',
  'HTTP and validation',
  'database',
  'image storage',
  'logging',
  'metrics and tracing',
  'service logic',
  'garbage collection',
  'other',
] as const;
export type Component = (typeof COMPONENTS)[number];

const RULES: Array<[Component, RegExp]> = [
  ['decode and resize', /\/node_modules\/sharp\/|\/(src|dist)\/images\/(decode|sniff|base64)\./],
  ['model input (tensor)', /\/(src|dist)\/inference\/(preprocess|families|shared-rasters|postprocess)\./],
  ['inference hand-off', /\/node_modules\/onnxruntime-|\/(src|dist)\/inference\/(onnxruntime-backend|batching|detector|canary-detector)\./],
  ['gRPC', /\/node_modules\/(@grpc|protobufjs|@protobufjs)\/|\/(src|dist)\/inference\/triton\//],
  ['HTTP and validation', /\/node_modules\/(fastify|@fastify|find-my-way|light-my-request|avvio|secure-json-parse|ajv|ajv-formats|fast-json-stringify|fast-uri)\/|\/(src|dist)\/api\/|^node:(_http|http|net|stream)/],
  ['database', /\/node_modules\/(knex|pg|pg-protocol|pg-pool|pg-types|postgres-)[^/]*\/|\/(src|dist)\/store\//],
  ['image storage', /\/node_modules\/@aws-sdk\/|\/(src|dist)\/images\/(local-store|s3-store|signed-url)\.|^node:(fs|internal\/fs)/],
  ['logging', /\/node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact|@pinojs)[^/]*\/|\/(src|dist)\/telemetry\/logging\./],
  ['metrics and tracing', /\/node_modules\/(prom-client|@opentelemetry)[^/]*\/|\/(src|dist)\/telemetry\//],
  ['service logic', /\/(src|dist)\//],
];

function ruleOf(url: string): Component | undefined {
  for (const [component, test] of RULES) if (test.test(url)) return component;
  return undefined;
}

/**
 * Share of the profile's busy time (idle excluded) per component, summing to 1, over the
 * samples taken between `window.fromMs` and `window.toMs` after the profile began (the
 * measured rounds: start-up, warm-up and shutdown left out).
 */
export function componentShares(profilePath: string, window: ProfileWindow): Map<Component, number> {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each node's component, from itself or its nearest ancestor that has one.
  const memo = new Map<number, Component | null>();
  const componentOf = (id: number): Component | null => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id) as ProfileNode;
    const name = node.callFrame.functionName;
    let c: Component | null = name === '(garbage collector)' ? 'garbage collection' : (ruleOf(node.callFrame.url) ?? null);
    if (c === null) {
      const up = parent.get(id);
      c = up === undefined ? null : componentOf(up);
    }
    memo.set(id, c);
    return c;
  };
  const time = new Map<Component, number>();
  let busy = 0;
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    elapsedUs += profile.timeDeltas[i] ?? 0;
    if (elapsedUs < window.fromMs * 1000 || elapsedUs > window.toMs * 1000) return;
    const name = (byId.get(id) as ProfileNode).callFrame.functionName;
    if (name === '(idle)') return;
    const dt = profile.timeDeltas[i] ?? 0;
    const c = componentOf(id) ?? 'other';
    time.set(c, (time.get(c) ?? 0) + dt);
    busy += dt;
  });
  return new Map(COMPONENTS.map((c) => [c, busy > 0 ? (time.get(c) ?? 0) / busy : 0]));
}

/** Node flags that make a process write its main thread's CPU profile into `dir` when it exits. */
export const profileArgs = (dir: string): string[] => ['--cpu-prof', '--cpu-prof-dir', dir];

/** Milliseconds after the profiled process was started. */
export interface ProfileWindow {
  fromMs: number;
  toMs: number;
}

/**
 * The shares of the newest main-thread profile in `dir`, written by a process started with
 * profileArgs and since stopped. Worker threads write profiles of their own
 * (`CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`); the main thread's id is 0.
 */
function profileShares(dir: string, window: ProfileWindow): Map<Component, number> {
  const files = readdirSync(dir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (files.length === 0) throw new Error(`no main-thread CPU profile in ${dir}: the process did not exit cleanly`);
  const newest = files.map((f) => path.join(dir, f)).sort((x, y) => statSync(y).mtimeMs - statSync(x).mtimeMs)[0];
  return componentShares(newest, window);
}

/**
 * The per-request table: the main thread's CPU split by the profile's shares, then the
 * work done off the main thread (by thread kind, from the OS) and by PostgreSQL.
 */
function componentLines(shares: Map<Component, number>, mainThreadMs: number, offThread: Array<[string, number]>): string[] {
  const rows: Array<[string, number]> = [
    ...COMPONENTS.map((c): [string, number] => [`main thread: ${c}`, (shares.get(c) ?? 0) * mainThreadMs]),
    ...offThread,
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  return [
    `${'CPU ms per request by component (medians)'.padEnd(width)}  ms`,
    ...rows.map(([label, ms]) => `${label.padEnd(width)}  ${ms.toFixed(2).padStart(6)}`),
    `${'total'.padEnd(width)}  ${total.toFixed(2).padStart(6)}`,
  ];
}

/** Thread kinds (as Node, libuv, libvips and V8 name them) listed beside the event loop's split. */
const OFF_THREAD: Array<[string, string]> = [
  ['WorkerThread', 'inference thread and ONNX Runtime pool'],
  ['libvips worker', 'libvips threads (decode, resize)'],
  ['libuv-worker', "libuv pool (sharp's calls, file system)"],
  ['V8Worker', 'V8 helper threads (GC)'],
];

/**
 * Stops the profiled API (its profile is written as it exits) and gives the component
 * table over the measured rounds (`rounds`, performance.now() times of this process):
 * `perRequest(kind)` is its CPU ms per request on threads of that kind; `extra` rows
 * (PostgreSQL, the load generator) follow. Thread kinds it has none of are left out.
 */
export async function profiledLines(
  api: { child: Child; spawnedAt: number },
  dir: string,
  rounds: { start: number; end: number },
  perRequest: (kind: string) => number,
  extra: Array<[string, number]>,
): Promise<string[]> {
  await api.child.stop(30_000);
  const offThread = OFF_THREAD.filter(([kind]) => perRequest(kind) > 0).map(([kind, label]): [string, number] => [label, perRequest(kind)]);
  return ['', ...componentLines(profileShares(dir, { fromMs: rounds.start - api.spawnedAt, toMs: rounds.end - api.spawnedAt }), perRequest('MainThread'), [...offThread, ...extra])];
}
