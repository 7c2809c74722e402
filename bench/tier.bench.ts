/**
 * `npm run bench -- tier`: what the API tier costs per request with inference remote
 * (issue 30), the product as shipped, in one run on loopback:
 *   - `recog inference-server` (our KServe v2 gRPC server) in a process of its own on the
 *     prepared model repository;
 *   - the API as `npm start` runs it (`npm run build`, then the compiled `recog serve`),
 *     in a process of its own, with
 *     TRITON_URL pointing at that server, logging at its default level, the default (local)
 *     image store; PostgreSQL and Redis from `scripts/services.sh start` (a fresh database,
 *     dropped after) when they answer, else npm start's embedded defaults. An organisation
 *     and a key are made with the `recog orgs/keys create` CLI, as a user does;
 *   - a minimal Python front end (bench/python-front/app.py: FastAPI, Pillow, tritonclient;
 *     no auth, database, limits or storage) on the same server;
 *   - a load generator in a process of its own: CALLERS concurrent callers sending
 *     `POST /v1/cv/requests/sync` (image_base64) over five real photos in turn.
 * Each round gives each front end ROUND_MS of load and then measures the floors: sharp
 * decoding the same photos to the model's input raster, with the service's own
 * prepareImage and with a bare sharp resize, and the decoding alone with no resize (the
 * least any front end that decodes these photos pays), in this process
 * (process.cpuUsage); and Pillow doing the Python front end's decoding
 * alone (bench/python-front/decode_floor.py), which splits that front end's cost into its
 * decoding and the rest. The front ends' and the v2 server's CPU time comes from the OS
 * (/proc/<pid>/stat) before and after each turn. Medians and ranges over the rounds are
 * printed, with requests/s; no verdict.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { loadCatalog } from '../src/models/catalog.js';
import { REPO_ROOT } from '../test/helpers/fixtures.js';
import { createTestDatabase, TEST_REDIS_URL } from '../test/helpers/services.js';
import type { RoundResult } from './tier/load-generator.js';
import { tierPhotos, type Photo } from './tier/photos.js';
import { commandCpuMs, getJson, listening, processCpuMs, startChild, threadCpuMs, type Child } from './tier/processes.js';
import { profileArgs, profiledLines } from './tier/profile-components.js';
import { forkLoadGenerator, startShippedApi } from './tier/shipped-api.js';
import { freePort } from '../test/helpers/local-server.js';

const ROUNDS = Number(process.env.BENCH_TIER_ROUNDS ?? 3);
/**
 * BENCH_PROFILE=1: the API writes a CPU profile, and its CPU per request is split by
 * component; BENCH_PROFILE=<directory> also keeps the profile there (for DevTools).
 */
const PROFILE = process.env.BENCH_PROFILE ?? '';
const ROUND_MS = Number(process.env.BENCH_TIER_ROUND_MS ?? 15_000);
const WARMUP_MS = Number(process.env.BENCH_TIER_WARMUP_MS ?? 3_000);
const CALLERS = Number(process.env.BENCH_TIER_CALLERS ?? 4);
/** Passes over the photo set per floor turn (5 photos each), 2 in flight like the API's decodes on 2 cores. */
const FLOOR_PASSES = Number(process.env.BENCH_TIER_FLOOR_PASSES ?? 12);
const FLOOR_IN_FLIGHT = 2;

const here = path.dirname(fileURLToPath(import.meta.url));
const run$ = promisify(execFile);

/** The model's first input as the v2 server declares it (GET /v2/models/<name>). */
interface ModelMetadata {
  name: string;
  versions?: string[];
  inputs: Array<{ name: string; datatype: string; shape: number[] }>;
}

/** PostgreSQL and Redis of scripts/services.sh when they answer (a fresh database), else the embedded defaults. */
async function databaseSettings(): Promise<{ env: Record<string, string>; label: string; drop(): Promise<void> }> {
  if (process.env.BENCH_TIER_DB !== 'embedded') {
    try {
      const db = await createTestDatabase();
      const redis = new URL(TEST_REDIS_URL);
      const redisUp = await listening(redis.hostname, Number(redis.port || 6379));
      return {
        env: { DATABASE_URL: db.url, REDIS_URL: redisUp ? TEST_REDIS_URL : '' },
        label: `PostgreSQL at TEST_DATABASE_URL (fresh database ${db.name}, dropped after), ${redisUp ? 'Redis at TEST_REDIS_URL' : 'in-process limiter (Redis not answering)'}`,
        drop: () => db.drop(),
      };
    } catch {
      // not running: the embedded defaults below
    }
  }
  return { env: { DATABASE_URL: '', REDIS_URL: '' }, label: "embedded PostgreSQL under DATA_DIR and the in-process limiter (npm start's defaults)", drop: async () => {} };
}

interface FrontTurn {
  rate: number;
  /** CPU ms per request: the front end's process, the v2 server's, the load generator's, PostgreSQL's and Redis's. */
  front: number;
  v2: number;
  generator: number;
  postgres: number;
  redis: number;
  /** The front end's CPU ms per request by thread kind (/proc/<pid>/task). */
  threads: Map<string, number>;
}

/** Runs the decode floor over the photo set `FLOOR_PASSES` times; this process's CPU ms per photo. */
async function floorTurn(photos: Photo[], decode: (bytes: Buffer) => Promise<unknown>): Promise<number> {
  const jobs = Array.from({ length: FLOOR_PASSES * photos.length }, (_, i) => photos[i % photos.length].bytes);
  let next = 0;
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: FLOOR_IN_FLIGHT }, async () => {
      while (next < jobs.length) await decode(jobs[next++]);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / jobs.length;
}

const median = (v: number[]): number => {
  const s = [...v].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const cell = (v: number[], digits = 1): string =>
  v.length === 0 ? '—' : `${median(v).toFixed(digits)} [${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)}]`;
/**
 * What the Python ratio leaves the API once it has decoded the photos, and what the front end
 * spends besides Pillow's decoding.
 */
function pythonSplit(front: number, pillow: number, decodeOnly: number): string[] {
  return [
    `  Python front end less Pillow's decoding: ${(front - pillow).toFixed(1)} ms (its HTTP, JSON, base64, gRPC)`,
    `  0.6 × Python front end = ${(0.6 * front).toFixed(1)} ms; less decoding alone, ${(0.6 * front - decodeOnly).toFixed(1)} ms are left for the API's HTTP, auth, database, storage, resize and gRPC`,
  ];
}
const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');

export async function run(): Promise<void> {
  const config = loadConfig();
  const catalog = await loadCatalog(config.modelCatalog);
  const work = await mkdtemp(path.join(os.tmpdir(), 'recog-tier-'));
  const cleanups: Array<() => Promise<unknown>> = [() => rm(work, { recursive: true, force: true })];
  try {
    const photos = await tierPhotos(path.join(work, 'photos'));

    // 1. The v2 server, on ports the OS picks (it prints them).
    const v2 = await startChild(
      'recog inference-server',
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'inference-server', '--host', '127.0.0.1', '--port', '0', '--http-port', '0'],
      { cwd: REPO_ROOT, env: { ...process.env, MODEL_REPOSITORY: config.modelRepository } },
      (out) => {
        const m = /gRPC on 127\.0\.0\.1:(\d+), HTTP on 127\.0\.0\.1:(\d+)/.exec(out);
        return m ? { grpc: Number(m[1]), http: Number(m[2]) } : undefined;
      },
    );
    cleanups.push(() => v2.child.stop());
    const ports = v2.value;
    const metadata = await getJson<ModelMetadata>(`http://127.0.0.1:${ports.http}/v2/models/${config.modelName}`);
    if (!metadata) throw new Error(`the v2 server has no model "${config.modelName}":\n${v2.child.tail()}`);
    const modelInput = metadata.inputs[0];
    // NHWC [-1, H, W, 3] or NCHW [-1, 3, H, W]: the model's raster size.
    const dims = modelInput.shape.slice(-3).map(Number);
    const nchw = dims[0] === 3 && dims[2] !== 3;
    const input = { width: nchw ? dims[2] : dims[1], height: nchw ? dims[1] : dims[0] };
    const datatype = modelInput.datatype === 'UINT8' ? ('UINT8' as const) : ('FP32' as const);

    // 2. The API, as its own process, on that server.
    const db = await databaseSettings();
    cleanups.push(() => db.drop());
    const profileDir = PROFILE === '1' ? path.join(work, 'profile') : path.resolve(PROFILE || work);
    const api = await startShippedApi(
      work,
      { ...db.env, TRITON_URL: `127.0.0.1:${ports.grpc}`, MODEL_REPOSITORY: config.modelRepository },
      'BENCH_TIER_API_NODE_ARGS',
      PROFILE ? profileArgs(profileDir) : [],
    );
    // Stopped before the database is dropped (cleanups run last first).
    cleanups.push(() => api.child.stop(30_000));

    // 3. The Python front end, when its environment builds.
    let python: { child: Child; port: number; venv: string } | undefined;
    let pythonSkipped = '';
    try {
      const venv = (await run$(path.join(here, 'python-front/env.sh'), [], { cwd: REPO_ROOT })).stdout.trim().split('\n').pop() as string;
      const port = await freePort();
      const started = await startChild(
        'the Python front end',
        path.join(venv, 'bin/python'),
        [path.join(here, 'python-front/app.py')],
        { cwd: REPO_ROOT, env: { ...process.env, TRITON_GRPC: `127.0.0.1:${ports.grpc}`, MODEL_NAME: config.modelName, HOST: '127.0.0.1', PORT: String(port) } },
        (): Promise<true | undefined> => getJson(`http://127.0.0.1:${port}/healthz`).then((h) => (h ? true : undefined)),
      );
      python = { child: started.child, port, venv };
      cleanups.push(() => started.child.stop());
    } catch (err) {
      pythonSkipped = (err as Error).message.split('\n').slice(0, 3).join(' ');
    }

    // 4. The load generator.
    const generator = await forkLoadGenerator(photos.map((p) => p.file), CALLERS);
    cleanups.push(async () => generator.close());
    const fronts = {
      api: { child: api.child, url: api.url, key: api.key },
      ...(python && { python: { child: python.child, url: `http://127.0.0.1:${python.port}/v1/cv/requests/sync`, key: undefined } }),
    };
    const turn = async (which: keyof typeof fronts, ms: number): Promise<FrontTurn> => {
      const front = fronts[which] as { child: Child; url: string; key?: string };
      await generator.ask({ type: 'target', url: front.url, key: front.key });
      const front0 = processCpuMs(front.child.pid);
      const threads0 = threadCpuMs(front.child.pid);
      const v20 = processCpuMs(v2.child.pid);
      const pg0 = commandCpuMs('postgres');
      const redis0 = commandCpuMs('redis-server');
      const r = await generator.ask<RoundResult>({ type: 'run', ms });
      if (r.error !== null) throw new Error(`${front.child.name}: ${r.error}\n${front.child.tail().slice(-2000)}`);
      const per = (ms: number): number => ms / r.count;
      return {
        rate: r.count / r.seconds,
        front: per(processCpuMs(front.child.pid) - front0),
        v2: per(processCpuMs(v2.child.pid) - v20),
        generator: per(r.cpuMs),
        postgres: per(commandCpuMs('postgres') - pg0),
        redis: per(commandCpuMs('redis-server') - redis0),
        threads: new Map([...threadCpuMs(front.child.pid)].map(([kind, ms]) => [kind, per(ms - (threads0.get(kind) ?? 0))])),
      };
    };
    const { fit, align } = catalog.detector.input;
    const floors = {
      prepareImage: (bytes: Buffer) => prepareImage(bytes, input, { maxPixels: config.imageMaxPixels, fit, align, datatype }),
      bareSharp: (bytes: Buffer) => sharp(bytes).resize(input.width, input.height, { fit: 'fill' }).raw().toBuffer(),
      decodeOnly: (bytes: Buffer) => sharp(bytes).raw().toBuffer(),
    };
    // Pillow's CPU per photo for the Python front end's decoding, in a process of its own.
    const pillowTurn = async (venv: string): Promise<number> => {
      const args = [path.join(here, 'python-front/decode_floor.py'), String(input.width), String(input.height), String(FLOOR_PASSES), ...photos.map((p) => p.file)];
      return (JSON.parse((await run$(path.join(venv, 'bin/python'), args)).stdout) as { ms_per_photo: number }).ms_per_photo;
    };

    // Warm-up: JIT, connections, pools, libvips's caches.
    for (const which of Object.keys(fronts) as Array<keyof typeof fronts>) await turn(which, WARMUP_MS);
    for (const decode of Object.values(floors)) await floorTurn(photos, decode);

    const loadBefore = load();
    const started = Date.now();
    const roundsStart = performance.now();
    const measured = { api: [] as FrontTurn[], python: [] as FrontTurn[], prepareImage: [] as number[], bareSharp: [] as number[], decodeOnly: [] as number[], pillow: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const which of Object.keys(fronts) as Array<keyof typeof fronts>) measured[which].push(await turn(which, ROUND_MS));
      measured.prepareImage.push(await floorTurn(photos, floors.prepareImage));
      measured.bareSharp.push(await floorTurn(photos, floors.bareSharp));
      measured.decodeOnly.push(await floorTurn(photos, floors.decodeOnly));
      if (python) measured.pillow.push(await pillowTurn(python.venv));
    }
    const rounds = { start: roundsStart, end: performance.now() };
    const seconds = (Date.now() - started) / 1000;
    const loadAfter = load();

    const of = (turns: FrontTurn[], k: Exclude<keyof FrontTurn, 'threads'>): number[] => turns.map((t) => t[k]);
    const apiCpu = median(of(measured.api, 'front'));
    const ratio = (a: number, b: number): string => (Number.isFinite(a / b) && b > 0 ? (a / b).toFixed(2) : '—');
    const rows: Array<[string, string, string]> = [
      ['API process, per sync request', cell(of(measured.api, 'front')), cell(of(measured.api, 'rate'))],
      [`floor: prepareImage (${input.width}×${input.height} ${datatype}, ${fit}), per photo`, cell(measured.prepareImage), '—'],
      [`floor: bare sharp resize ${input.width}×${input.height} fill .raw(), per photo`, cell(measured.bareSharp), '—'],
      ['floor: decoding alone, no resize (sharp .raw()), per photo', cell(measured.decodeOnly), '—'],
      ['Python front end process, per request', python ? cell(of(measured.python, 'front')) : 'skipped', python ? cell(of(measured.python, 'rate')) : '—'],
      ['  of which Pillow decode + resize (decode_floor.py), per photo', python ? cell(measured.pillow) : '—', '—'],
      ['v2 server, per request (API turns)', cell(of(measured.api, 'v2')), '—'],
      ['v2 server, per request (Python turns)', python ? cell(of(measured.python, 'v2')) : '—', '—'],
      ['load generator, per request (API / Python)', `${median(of(measured.api, 'generator')).toFixed(1)} / ${python ? median(of(measured.python, 'generator')).toFixed(1) : '—'}`, '—'],
      // Machine-wide: every postgres and redis-server process, so other users' load shows here too.
      ['PostgreSQL (every postgres process), per API request', cell(of(measured.api, 'postgres')), '—'],
      ['Redis (every redis-server process), per API request', cell(of(measured.api, 'redis')), '—'],
    ];
    const width = Math.max(...rows.map((r) => r[0].length));
    const lines = [
      `machine     ${os.availableParallelism()} cores; load average (1/5/15 min) before ${loadBefore}, after ${loadAfter}`,
      `photos      ${photos.length}, sent in turn (each equally often):`,
      ...photos.map((p) => `              ${p.name.padEnd(28)} ${`${p.width}×${p.height}`.padEnd(10)} ${String(p.bytes.length).padStart(7)} bytes  ${p.origin}`),
      `load        ${CALLERS} callers in a separate process, POST /v1/cv/requests/sync {external_id, image_base64}; warm-up ${WARMUP_MS / 1000} s per front end`,
      `rounds      ${ROUNDS} × (API ${ROUND_MS / 1000} s, Python ${ROUND_MS / 1000} s, floors ${FLOOR_PASSES} passes × 3 sharp variants and Pillow), ${seconds.toFixed(0)} s in all`,
      `v2 server   recog inference-server (own process), model ${metadata.name}, input ${modelInput.name} ${modelInput.datatype} [${modelInput.shape.join(',')}], INFERENCE_THREADS ${process.env.INFERENCE_THREADS ?? 'unset (all cores)'}`,
      `API         ${api.label}; TRITON_URL to that server; LOG_LEVEL ${process.env.LOG_LEVEL ?? 'info (the default)'}; image store ${process.env.IMAGE_STORE ?? 'local (the default)'} under a temp DATA_DIR`,
      `            ${db.label}; key made with recog orgs/keys create`,
      `Python      ${python ? 'bench/python-front/app.py: FastAPI + uvicorn (uvloop, httptools; access log at info), Pillow, numpy, tritonclient gRPC; no auth, database, limits or storage' : `skipped: ${pythonSkipped}`}`,
      `floor       sharp in the bench process (process.cpuUsage: every thread, libvips's too), ${FLOOR_IN_FLIGHT} in flight; Pillow in its own process, one at a time`,
      '',
      `${'CPU ms per item: median [range over rounds]'.padEnd(width)}  ${'CPU ms'.padEnd(22)}  requests/s`,
      ...rows.map(([label, cpu, rate]) => `${label.padEnd(width)}  ${cpu.padEnd(22)}  ${rate}`),
      '',
      `API / floor (prepareImage)   ${ratio(apiCpu, median(measured.prepareImage))}   (issue 30 asks ≤ 1.25)`,
      `API / floor (bare sharp)     ${ratio(apiCpu, median(measured.bareSharp))}`,
      `API / Python front end       ${python ? ratio(apiCpu, median(of(measured.python, 'front'))) : '—'}   (issue 30 asks ≤ 0.6)`,
      ...(python ? pythonSplit(median(of(measured.python, 'front')), median(measured.pillow), median(measured.decodeOnly)) : []),
      `API cores per GPU at ${apiCpu.toFixed(1)} ms/request: ${[100, 300, 1000].map((n) => `${n} images/s → ${((n * apiCpu) / 1000).toFixed(1)}`).join(', ')}`,
    ];
    if (PROFILE) {
      const perRequest = (kind: string): number => median(measured.api.map((t) => t.threads.get(kind) ?? 0));
      lines.push(...(await profiledLines(api, profileDir, rounds, perRequest, [['PostgreSQL processes', median(of(measured.api, 'postgres'))]])));
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => process.stderr.write(`tier bench cleanup: ${String(err)}\n`));
  }
}
