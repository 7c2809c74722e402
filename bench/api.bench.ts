/**
 * `npm run bench -- api`: the embedded service as users run it, against its own parts
 * (issues 12 and 30), in one run on this machine:
 *   (a) bare model: the embedded ONNX Runtime backend on a tensor made once (on shared
 *       memory, as the detector's rasters are), 3 calls in flight, in this process;
 *   (b) full pipeline: the service's detector on the photo's bytes (decode, resize, infer,
 *       postprocess; no HTTP, database or storage), 3 in flight, in this process;
 *   (c) the API as shipped: `recog serve` (what `npm start` runs) in a process of its own on
 *       npm start's defaults: embedded PostgreSQL under a temporary DATA_DIR, the in-process
 *       limiter, the embedded ONNX Runtime, the local image store, logging at its default
 *       level; `POST /v1/cv/requests/sync` (image_base64) from CALLERS callers in a load
 *       generator of its own process; a key made with the `recog` CLI.
 * All three run on this process's service settings (INFERENCE_THREADS etc.); only
 * DATABASE_URL, REDIS_URL and TRITON_URL are cleared for (c), so it gets the embedded
 * defaults. Each round runs a, b, c for PHASE_MS each, so load from other users of the
 * machine weighs on all three alike; medians and ranges over the rounds are printed with
 * the CPU each spends per item by process and thread (from /proc), and the load average.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createInferenceBackend } from '../src/inference/create-backend.js';
import { Detector } from '../src/inference/detector.js';
import { toModelInput } from '../src/inference/families.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { loadCatalog } from '../src/models/catalog.js';
import type { RoundResult } from './tier/load-generator.js';
import { tierPhotos } from './tier/photos.js';
import { commandCpuMs, processCpuMs, threadCpuMs } from './tier/processes.js';
import { profileArgs, profiledLines } from './tier/profile-components.js';
import { forkLoadGenerator, startShippedApi } from './tier/shipped-api.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 15_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 5_000);
/** HTTP callers for (c): more than the API's detect slots, so decode of one overlaps inference of others. */
const CALLERS = Number(process.env.BENCH_CALLERS ?? 6);
/** Calls in flight for (a) and (b): enough that the session's queue never runs dry. */
const IN_FLIGHT = 3;
/** Which of the tier bench's photos (bench/tier/photos.ts) are sent, by file name; `all` for the five in turn. */
const PHOTO = process.env.BENCH_API_PHOTO ?? 'small-548x342.jpg';
/**
 * BENCH_PROFILE=1: the API writes a CPU profile, and its CPU per request is split by
 * component; BENCH_PROFILE=<directory> also keeps the profile there (for DevTools).
 */
const PROFILE = process.env.BENCH_PROFILE ?? '';
/** Settings cleared for (c), so the API runs on npm start's embedded defaults whatever this shell exports. */
const CLEARED = ['DATABASE_URL', 'REDIS_URL', 'TRITON_URL'];

/**
 * Threads by the names Node, libuv, libvips and V8 give them. In (c) "WorkerThread" is the
 * inference thread with ONNX Runtime's pool; in (a) and (b) the same, in this process.
 */
const THREADS: Array<[string, string]> = [
  ['MainThread', 'event loop'],
  ['WorkerThread', 'inference'],
  ['libvips worker', 'libvips'],
  ['libuv-worker', 'libuv pool'],
  ['V8Worker', 'V8 helpers'],
];

interface Phase {
  rate: number;
  /** CPU ms per item of the process that served it, by thread kind, and in all. */
  threads: Map<string, number>;
  total: number;
  /** (c) only: PostgreSQL's processes and the load generator, ms per request. */
  postgres?: number;
  generator?: number;
}

/** Keeps `inFlight` calls of `task` going for `ms`; items per second. */
async function rate(task: () => Promise<unknown>, ms: number, inFlight: number): Promise<{ rate: number; count: number }> {
  const start = performance.now();
  const end = start + ms;
  let count = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await task();
        count++;
      }
    }),
  );
  return { rate: count / ((performance.now() - start) / 1000), count };
}

/** CPU ms per item by thread kind of `pid` over `work`, which returns how many items it did. */
async function perItem(pid: number | 'self', work: () => Promise<{ rate: number; count: number }>): Promise<Phase> {
  const before = threadCpuMs(pid);
  const total0 = processCpuMs(pid === 'self' ? process.pid : pid);
  const r = await work();
  const threads = new Map([...threadCpuMs(pid)].map(([kind, ms]) => [kind, (ms - (before.get(kind) ?? 0)) / r.count]));
  return { rate: r.rate, threads, total: (processCpuMs(pid === 'self' ? process.pid : pid) - total0) / r.count };
}

const median = (v: number[]): number => {
  const s = [...v].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const cell = (v: number[], digits = 1): string => `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}]`;
const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');

export async function run(): Promise<void> {
  const config = loadConfig();
  const work = await mkdtemp(path.join(os.tmpdir(), 'recog-api-bench-'));
  const cleanups: Array<() => Promise<unknown>> = [() => rm(work, { recursive: true, force: true })];
  try {
    const all = await tierPhotos(path.join(work, 'photos'));
    const photos = PHOTO === 'all' ? all : all.filter((p) => p.name === PHOTO);
    if (photos.length === 0) throw new Error(`BENCH_API_PHOTO=${PHOTO}: not one of ${all.map((p) => p.name).join(', ')} or all`);

    // (a) and (b): the service's detector and its backend, in this process.
    const backend = await createInferenceBackend(config);
    cleanups.push(() => backend.close());
    await backend.start();
    const detector = new Detector(backend, await loadCatalog(config.modelCatalog), { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    const { input } = detector.spec;
    const prepared = await prepareImage(photos[0].bytes, input, { maxPixels: config.imageMaxPixels, fit: input.fit, align: input.align, datatype: detector.inputType });
    const tensor = toModelInput(prepared.tensor, prepared.geometry, detector.spec);
    const shared = tensor.data instanceof Float32Array ? new Float32Array(new SharedArrayBuffer(tensor.data.byteLength)) : new Uint8Array(new SharedArrayBuffer(tensor.data.byteLength));
    shared.set(tensor.data as ArrayLike<number>);
    tensor.data = shared;

    // (c): the API as shipped, and the load generator.
    const env: Record<string, string> = Object.fromEntries(CLEARED.map((name) => [name, '']));
    const profileDir = PROFILE === '1' ? path.join(work, 'profile') : path.resolve(PROFILE || work);
    const api = await startShippedApi(work, env, 'BENCH_API_NODE_ARGS', PROFILE ? profileArgs(profileDir) : []);
    cleanups.push(() => api.child.stop(30_000));
    const generator = await forkLoadGenerator(
      photos.map((p) => p.file),
      CALLERS,
    );
    cleanups.push(async () => generator.close());
    await generator.ask({ type: 'target', url: api.url, key: api.key });

    let next = 0;
    const phases = {
      a: () => perItem('self', () => rate(() => backend.infer([tensor]), PHASE_MS, IN_FLIGHT)),
      b: () => perItem('self', () => rate(() => detector.detect(photos[next++ % photos.length].bytes), PHASE_MS, IN_FLIGHT)),
      c: async (): Promise<Phase> => {
        const pg0 = commandCpuMs('postgres');
        let round: RoundResult | undefined;
        const phase = await perItem(api.child.pid, async () => {
          round = await generator.ask<RoundResult>({ type: 'run', ms: PHASE_MS });
          if (round.error !== null) throw new Error(`the API: ${round.error}\n${api.child.tail().slice(-2000)}`);
          return { rate: round.count / round.seconds, count: round.count };
        });
        const r = round as RoundResult;
        return { ...phase, postgres: (commandCpuMs('postgres') - pg0) / r.count, generator: r.cpuMs / r.count };
      },
    };
    // Warm-up: JIT, connections, pools, libvips's caches; (c) also fills the embedded database's caches.
    await rate(() => backend.infer([tensor]), WARMUP_MS / 2, IN_FLIGHT);
    await rate(() => detector.detect(photos[0].bytes), WARMUP_MS / 2, IN_FLIGHT);
    await generator.ask<RoundResult>({ type: 'run', ms: WARMUP_MS });

    const loadBefore = load();
    const started = Date.now();
    const roundsStart = performance.now();
    const measured = { a: [] as Phase[], b: [] as Phase[], c: [] as Phase[] };
    for (let r = 0; r < ROUNDS; r++) for (const k of ['a', 'b', 'c'] as const) measured[k].push(await phases[k]());
    const rounds = { start: roundsStart, end: performance.now() };
    const seconds = (Date.now() - started) / 1000;
    const loadAfter = load();

    const rates = (k: 'a' | 'b' | 'c'): number[] => measured[k].map((p) => p.rate);
    const ratios = (over: 'a' | 'b'): number[] => measured.c.map((p, i) => p.rate / measured[over][i].rate);
    const thread = (k: 'a' | 'b' | 'c', kind: string): string => median(measured[k].map((p) => p.threads.get(kind) ?? 0)).toFixed(1).padStart(6);
    const settings = ['DETECTION_PROFILE', 'INFERENCE_THREADS', 'INFERENCE_MAX_BATCH', 'DETECT_CONCURRENCY', 'LOG_LEVEL', 'IMAGE_STORE'].map((name) => `${name}=${process.env[name] ?? '(default)'}`).join(' ');
    const lines = [
      `machine     ${os.availableParallelism()} cores; load average (1/5/15 min) before ${loadBefore}, after ${loadAfter}`,
      `model       ${backend.metadata().name}, input ${input.width}×${input.height} ${detector.inputType}, ${config.inferenceThreads} inference threads`,
      `photos      ${photos.map((p) => `${p.name} (${p.width}×${p.height}, ${p.bytes.length} bytes)`).join(', ')}`,
      `API         ${api.label}, own process; npm start's defaults (${CLEARED.join(', ')} cleared: embedded PostgreSQL, in-process limiter, embedded ONNX Runtime); ${settings}`,
      `load        ${CALLERS} callers in a separate process, POST /v1/cv/requests/sync {external_id, image_base64}`,
      `phases      ${ROUNDS} rounds × (a, b, c) × ${PHASE_MS / 1000} s after a warm-up (a and b ${WARMUP_MS / 2000} s each, c ${WARMUP_MS / 1000} s), ${seconds.toFixed(0)} s in all`,
      '',
      'median [range over rounds]',
      `(a) bare model     ${cell(rates('a'), 2)} inferences/s  (${IN_FLIGHT} in flight, this process)`,
      `(b) full pipeline  ${cell(rates('b'), 2)} images/s      (${IN_FLIGHT} in flight, this process)`,
      `(c) API sync       ${cell(rates('c'), 2)} requests/s    (the API's process)`,
      `c/a ${cell(ratios('a'), 3)}   (issue 30 asks ≥ 0.80)`,
      `c/b ${cell(ratios('b'), 3)}   (issue 30 asks ≥ 0.92)`,
      '',
      `CPU ms per item, medians: the serving process by thread, then every postgres process on the machine and the load generator`,
      `        ${THREADS.map(([, label]) => label.padStart(11)).join('')}  process  PostgreSQL  load generator`,
      ...(['a', 'b', 'c'] as const).map(
        (k) =>
          `  (${k}) ${THREADS.map(([kind]) => thread(k, kind).padStart(11)).join('')}  ${median(measured[k].map((p) => p.total)).toFixed(1).padStart(7)}` +
          (k === 'c' ? `  ${median(measured.c.map((p) => p.postgres ?? 0)).toFixed(1).padStart(10)}  ${median(measured.c.map((p) => p.generator ?? 0)).toFixed(1).padStart(14)}` : ''),
      ),
    ];
    if (PROFILE) {
      const perRequest = (kind: string): number => median(measured.c.map((p) => p.threads.get(kind) ?? 0));
      lines.push(
        ...(await profiledLines(api, profileDir, rounds, perRequest, [
          ['PostgreSQL processes', median(measured.c.map((p) => p.postgres ?? 0))],
          ['load generator (its own process)', median(measured.c.map((p) => p.generator ?? 0))],
        ])),
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => process.stderr.write(`api bench cleanup: ${String(err)}\n`));
  }
}
