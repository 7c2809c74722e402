/**
 * `npm run bench -- api`: the three rates issue 12 compares, in one run on this machine:
 *   (a) bare model: the embedded ONNX Runtime backend on a tensor made once;
 *   (b) full pipeline alone: Detector.detect on the JPEG bytes (decode, resize, infer,
 *       postprocess), no HTTP or database;
 *   (c) API sync at saturation: POST /v1/cv/requests/sync over real HTTP on loopback,
 *       embedded backend, PostgreSQL from TEST_DATABASE_URL, in-memory limiter, base64 body;
 *       the callers run in a worker thread, off the service's event loop.
 * All three use the service's own configuration (INFERENCE_THREADS etc.). They take turns
 * (a, b, c, a, b, c, ...) in short slices and the medians of the per-slice rates are
 * compared, so load from other users of the machine weighs on all three alike. The load
 * average is printed before and after: read the figures with it.
 */
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { loadConfig, SETTINGS } from '../src/config.js';
import { createInferenceBackend } from '../src/inference/create-backend.js';
import { Detector } from '../src/inference/detector.js';
import { toModelInput } from '../src/inference/families.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { loadCatalog } from '../src/models/catalog.js';
import { readFixture } from '../test/helpers/fixtures.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 3000);
/** Calls in flight for (a) and (b): enough that the session's queue never runs dry. */
const IN_FLIGHT = 3;
/** HTTP callers for (c): more than (b) needs, so decode of one overlaps inference of others. */
const CALLERS = Number(process.env.BENCH_CALLERS ?? 6);

/**
 * The HTTP callers of (c) run in a worker thread, as a load generator would run in a process
 * of its own: the service's event loop then carries only the service's work. (They still
 * share the machine's cores, like any load test on one machine.) CommonJS, evaluated as is.
 */
const CALLER_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, key, body, prefix } = workerData;
let seq = 0;
// node:http with the image's bytes made once: per call the generator copies them into one
// Buffer (off the JavaScript heap) behind a new head, which costs half the CPU of fetch()
// with a new 60 kB body string each time (0.7 against 1.4 ms).
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
const image = Buffer.from(body);
const tail = Buffer.from('}');
function post(id) {
  return new Promise((resolve, reject) => {
    const head = Buffer.from('{"external_id":"' + prefix + '-' + id + '","image_base64":');
    const headers = { 'content-type': 'application/json', 'x-api-key': key, 'content-length': head.length + image.length + tail.length };
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(Buffer.concat([head, image, tail]));
  });
}
parentPort.on('message', async ({ ms, callers }) => {
  const start = performance.now();
  const cpu0 = process.threadCpuUsage();
  const end = start + ms;
  let count = 0;
  let error = null;
  await Promise.all(Array.from({ length: callers }, async () => {
    while (performance.now() < end && error === null) {
      try {
        const res = await post(++seq);
        const json = JSON.parse(res.text);
        if (res.status !== 200 || json.status !== 'DONE') error = 'HTTP ' + res.status + ' ' + (json.status || json.error_code);
        else count++;
      } catch (err) {
        error = String(err);
      }
    }
  }));
  const cpu = process.threadCpuUsage(cpu0);
  parentPort.postMessage({ count, seconds: (performance.now() - start) / 1000, cpuMs: (cpu.user + cpu.system) / 1000, error });
});
`;

/** Starts the caller worker; `slice(ms)` runs CALLERS callers for that long and gives the rate. */
function httpCallers(url: string, key: string, body: string): { slice(ms: number): Promise<number>; cpuMsPerCall: number; close(): Promise<number> } {
  const worker = new Worker(CALLER_WORKER, { eval: true, workerData: { url, key, body, prefix: `bench-${process.pid}` } });
  const callers = {
    /** The callers' own CPU time per call in the last slice (the load generator's share of the machine). */
    cpuMsPerCall: 0,
    slice: (ms: number) =>
      new Promise<number>((resolve, reject) => {
        worker.once('message', (m: { count: number; seconds: number; cpuMs: number; error: string | null }) => {
          if (m.error !== null) return reject(new Error(m.error));
          callers.cpuMsPerCall = m.cpuMs / m.count;
          resolve(m.count / m.seconds);
        });
        worker.postMessage({ ms, callers: CALLERS });
      }),
    close: () => worker.terminate(),
  };
  return callers;
}

async function rate(task: () => Promise<unknown>, ms: number, inFlight: number): Promise<number> {
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
  return count / ((performance.now() - start) / 1000);
}

/** The machine's CPU time so far, busy and in all, in ms (/proc/stat's first line; Linux only, else zeros). */
function machineCpu(): { busyMs: number; totalMs: number } {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3] + fields[4]; // idle + iowait
    const tick = 1000 / 100; // USER_HZ
    return { busyMs: (total - idle) * tick, totalMs: total * tick };
  } catch {
    return { busyMs: 0, totalMs: 0 };
  }
}

/** CPU time of every PostgreSQL process on the machine so far, in ms (Linux only, else 0). */
function postgresCpuMs(): number {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10;
}

/**
 * This process's CPU time so far by kind of thread, in ms, from the names Node, libuv,
 * libvips and V8 give their threads (Linux only, else empty). "WorkerThread" is every
 * worker: the inference session's, ONNX Runtime's pool thread it starts, and (c)'s callers.
 */
function threadCpuMs(): Map<string, number> {
  const kinds = new Map<string, number>();
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        kinds.set(name, (kinds.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
      } catch {
        // ended meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return kinds;
}

interface Measured {
  rate: number;
  busy: number;
  cpuMsPerItem: number;
  postgresMsPerItem: number;
  /** This process's CPU ms per item by kind of thread. */
  threadMsPerItem: Map<string, number>;
}

/** Runs a turn and notes the machine's CPU over it: busy share, busy CPU ms per item done, PostgreSQL's and each thread kind's part of it. */
async function measured(turn: (ms: number) => Promise<number>, ms: number): Promise<Measured> {
  const before = machineCpu();
  const pg0 = postgresCpuMs();
  const threads0 = threadCpuMs();
  const t0 = performance.now();
  const rate = await turn(ms);
  const items = rate * ((performance.now() - t0) / 1000);
  const after = machineCpu();
  const total = after.totalMs - before.totalMs;
  const busyMs = after.busyMs - before.busyMs;
  const threadMsPerItem = new Map([...threadCpuMs()].map(([kind, cpuMs]) => [kind, (cpuMs - (threads0.get(kind) ?? 0)) / items]));
  return { rate, busy: total > 0 ? busyMs / total : 0, cpuMsPerItem: busyMs / items, postgresMsPerItem: (postgresCpuMs() - pg0) / items, threadMsPerItem };
}

/** The service settings given in this process's environment, bar where the test app keeps its data. */
function serviceEnv(): Record<string, string> {
  const own = new Set(['DATABASE_URL', 'DATA_DIR', 'MODEL_REPOSITORY']);
  const env: Record<string, string> = {};
  for (const { env: name } of Object.values(SETTINGS)) {
    const value = process.env[name];
    if (value !== undefined && !own.has(name)) env[name] = value;
  }
  return env;
}

const median = (v: number[]): number => {
  const s = [...v].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
/**
 * Medians of this process's CPU ms per item by thread: the event loop, inference (the
 * workers less (c)'s callers), libvips (decode and resize), the libuv pool (file system,
 * crypto, sharp's calls) and V8's helpers (garbage collection, compilation).
 */
function threadLines(perTurn: Record<'a' | 'b' | 'c', Array<Map<string, number>>>, callerCpu: number[]): string[] {
  const kinds: Array<[string, string]> = [
    ['MainThread', 'event loop'],
    ['WorkerThread', 'inference'],
    ['libvips worker', 'libvips'],
    ['libuv-worker', 'libuv pool'],
    ['V8Worker', 'V8 helpers'],
  ];
  if (perTurn.a.every((m) => m.size === 0)) return [];
  const cell = (k: 'a' | 'b' | 'c', kind: string): string => {
    const values = perTurn[k].map((m, i) => (m.get(kind) ?? 0) - (kind === 'WorkerThread' && k === 'c' ? callerCpu[i] : 0));
    return median(values).toFixed(1).padStart(5);
  };
  return [
    `this process's CPU ms per item, by thread (medians):  ${kinds.map(([, label]) => label).join(' / ')}`,
    ...(['a', 'b', 'c'] as const).map((k) => `  (${k}) ${kinds.map(([kind]) => cell(k, kind)).join('  ')}`),
  ];
}
const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');

export async function run(): Promise<void> {
  let helpers: typeof import('../test/helpers/app.js');
  try {
    helpers = await import('../test/helpers/app.js');
    const { createTestDatabase } = await import('../test/helpers/services.js');
    await (await createTestDatabase()).drop();
  } catch (err) {
    process.stdout.write(`skipped: (c) needs the test PostgreSQL (TEST_DATABASE_URL): ${(err as Error).message}\n`);
    return;
  }
  const config = loadConfig();
  const catalog = await loadCatalog(config.modelCatalog);
  const backend = createInferenceBackend(config);
  await backend.start();
  // The API gets the same settings as (a) and (b): the test app's own defaults (one
  // inference thread, for tests running side by side) would otherwise apply to the API alone.
  const api = await helpers.buildTestApp({ ...serviceEnv(), INFERENCE_THREADS: String(config.inferenceThreads), LOG_LEVEL: 'silent' });
  let closeCallers = async (): Promise<unknown> => undefined;
  try {
    const detector = new Detector(backend, catalog, { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    const png = readFixture('basketball1.png');
    const jpeg = await sharp(png).jpeg({ quality: 90 }).toBuffer();
    const { input } = detector.spec;
    const prepared = await prepareImage(jpeg, input, { maxPixels: config.imageMaxPixels, fit: input.fit, datatype: detector.inputType });
    // On shared memory, as the detector's rasters are: the worker reads it without a copy.
    const tensor = toModelInput(prepared.tensor, prepared.geometry, detector.spec);
    const shared = tensor.data instanceof Float32Array ? new Float32Array(new SharedArrayBuffer(tensor.data.byteLength)) : new Uint8Array(new SharedArrayBuffer(tensor.data.byteLength));
    shared.set(tensor.data as ArrayLike<number>);
    tensor.data = shared;

    const key = await api.newKey({ rateLimit: 1_000_000, quota: 1_000_000 });
    const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
    const body = JSON.stringify(jpeg.toString('base64'));
    const callers = httpCallers(`${address}/v1/cv/requests/sync`, key.key, body);
    closeCallers = () => callers.close();
    const turns = {
      a: (ms: number) => rate(() => backend.infer([tensor]), ms, IN_FLIGHT),
      b: (ms: number) => rate(() => detector.detect(jpeg), ms, IN_FLIGHT),
      c: (ms: number) => callers.slice(ms),
    };
    // Warm-up: JIT, connection pool, sharp's caches.
    for (const k of ['a', 'b', 'c'] as const) await turns[k](1000);

    const loadBefore = load();
    const rates = { a: [] as number[], b: [] as number[], c: [] as number[] };
    const busy = { a: [] as number[], b: [] as number[], c: [] as number[] };
    const cpu = { a: [] as number[], b: [] as number[], c: [] as number[] };
    const callerCpu: number[] = [];
    const postgresCpu: number[] = [];
    const threadCpu = { a: [] as Array<Map<string, number>>, b: [] as Array<Map<string, number>>, c: [] as Array<Map<string, number>> };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of ['a', 'b', 'c'] as const) {
        const m = await measured(turns[k], SLICE_MS);
        rates[k].push(m.rate);
        busy[k].push(m.busy);
        cpu[k].push(m.cpuMsPerItem);
        threadCpu[k].push(m.threadMsPerItem);
        if (k === 'c') {
          callerCpu.push(callers.cpuMsPerCall);
          postgresCpu.push(m.postgresMsPerItem);
        }
      }
    }
    const loadAfter = load();
    const a = median(rates.a);
    const b = median(rates.b);
    const c = median(rates.c);
    const each = (v: number[]) => v.map((x) => x.toFixed(1)).join(' ');
    const lines = [
      `machine     ${os.availableParallelism()} cores, INFERENCE_THREADS ${config.inferenceThreads}, model ${backend.metadata().name} ${input.width}×${input.height}`,
      `image       basketball1.png as JPEG q90, ${jpeg.length} bytes (${body.length} as base64)`,
      `turns       ${ROUNDS} × (a, b, c), ${SLICE_MS} ms each; load average (1/5/15 min) before ${loadBefore}, after ${loadAfter}`,
      `(a) bare model     ${a.toFixed(2)} inferences/s  median of [${each(rates.a)}]  (${IN_FLIGHT} in flight)`,
      `(b) full pipeline  ${b.toFixed(2)} images/s      median of [${each(rates.b)}]  (${IN_FLIGHT} in flight)`,
      `(c) API sync       ${c.toFixed(2)} requests/s    median of [${each(rates.c)}]  (${CALLERS} HTTP callers in a worker thread)`,
      // Machine-wide: the service, PostgreSQL and the callers alike (and anyone else's load).
      `machine CPU busy / busy CPU ms per item (medians): ${(['a', 'b', 'c'] as const).map((k) => `(${k}) ${(100 * median(busy[k])).toFixed(0)} % / ${median(cpu[k]).toFixed(1)} ms`).join('   ')}`,
      `(c) per request: load generator ${median(callerCpu).toFixed(1)} ms, PostgreSQL ${median(postgresCpu).toFixed(1)} ms, the service and the kernel ${(median(cpu.c) - median(callerCpu) - median(postgresCpu)).toFixed(1)} ms`,
      ...threadLines(threadCpu, callerCpu),
      `c/b ${(c / b).toFixed(3)} (target ≥ 0.90: ${c / b >= 0.9 ? 'met' : 'NOT met'})   c/a ${(c / a).toFixed(3)} (target ≥ 0.85: ${c / a >= 0.85 ? 'met' : 'NOT met'})   b/a ${(b / a).toFixed(3)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await closeCallers();
    await api.close();
    await backend.close();
  }
}
