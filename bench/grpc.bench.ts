/**
 * Inference throughput through KServe v2 gRPC (TritonBackend → the local v2 server, which
 * runs the same ONNX Runtime session behind a dynamic batcher) next to the embedded
 * backend, its raw limit, in the same run on the same machine; then the API's sync
 * throughput (POST /v1/cv/requests/sync over real HTTP on loopback) on both backends.
 *
 * The candidates take turns in ROUNDS short slices (BENCH_SECONDS in all per candidate,
 * default 6), so a noisy neighbour on the machine weighs on all of them alike; only one
 * works at a time. The v2 server runs in this process (its model on a worker thread).
 * The API part needs the test PostgreSQL (TEST_DATABASE_URL) and is skipped without it.
 * With the Python test environment (scripts/python-env.sh), real Triton (tritonserver from
 * nvidia-pytriton, python backend running ONNX Runtime) is the third candidate, and its own
 * statistics (queue and compute time per request and per execution) are printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { InferenceBackend, Tensor } from '../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../src/inference/onnxruntime-backend.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { TritonBackend } from '../src/inference/triton/triton-backend.js';
import { REPO_ROOT, readFixture } from '../test/helpers/fixtures.js';
import { pythonEnv, startRealTriton, type RealTriton } from '../test/helpers/python-env.js';
import type { ModelStatisticsMsg } from '../src/inference/triton/messages.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = 3;
const WARMUP_MS = 1_000;
const CONCURRENCY = 4;
const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const MODEL = 'centernet';
const THREADS = os.availableParallelism();

interface Candidate {
  name: string;
  callers: number;
  fn: () => Promise<void>;
}

interface Tally {
  latencies: number[];
  seconds: number;
  errors: number;
  firstError?: string;
}

/** `callers` loops calling `fn` back to back for `ms`. */
async function slice(c: Candidate, ms: number, t: Tally): Promise<void> {
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: c.callers }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await c.fn();
          t.latencies.push(performance.now() - t0);
        } catch (err) {
          t.errors++;
          t.firstError ??= (err as Error).message;
        }
      }
    }),
  );
  t.seconds += (performance.now() - start) / 1000;
}

/** Warms each candidate up, then runs them in turns; one line per candidate, ratios to the first. */
async function compare(title: string, unit: string, candidates: Candidate[]): Promise<void> {
  for (const c of candidates) await slice(c, WARMUP_MS, { latencies: [], seconds: 0, errors: 0 });
  const tallies = candidates.map((): Tally => ({ latencies: [], seconds: 0, errors: 0 }));
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < candidates.length; i++) await slice(candidates[i], (SECONDS * 1000) / ROUNDS, tallies[i]);
  }
  process.stdout.write(`\n${title}\n`);
  const base = tallies[0].latencies.length / tallies[0].seconds;
  candidates.forEach((c, i) => {
    const t = tallies[i];
    const rate = t.latencies.length / t.seconds;
    const sorted = [...t.latencies].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
    const ratio = i === 0 ? '   (raw limit)' : `   ${(rate / base).toFixed(2)}× ${candidates[0].name.split(',')[0]}`;
    const errors = t.errors ? `   errors ${t.errors} (first: ${t.firstError})` : '';
    process.stdout.write(`  ${c.name.padEnd(50)} ${rate.toFixed(2).padStart(7)} ${unit}/s   p50 ${at(0.5).toFixed(0).padStart(5)} ms   p95 ${at(0.95).toFixed(0).padStart(5)} ms${ratio}${errors}\n`);
  });
}

interface ChildServer {
  child: ChildProcess;
  grpcAddress: string;
}

/** `recog inference-server` on free ports; resolves once it listens. */
function startChildServer(): Promise<ChildServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'inference-server', '--host', '127.0.0.1', '--port', '0', '--http-port', '0', '--threads', String(THREADS)],
    { cwd: REPO_ROOT, env: { ...process.env, MODEL_REPOSITORY }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      const m = /gRPC on (127\.0\.0\.1:\d+)/.exec(log);
      if (m) resolve({ child, grpcAddress: m[1] });
    });
    child.once('exit', (code) => reject(new Error(`inference-server exited (${code}) before listening:\n${log}`)));
  });
}

async function stopChildServer(s: ChildServer): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

export async function run(): Promise<void> {
  process.stdout.write(`${os.availableParallelism()} cores, ONNX Runtime ${THREADS} threads in each session, ${SECONDS} s per candidate in ${ROUNDS} turns\n`);
  // The prepared model takes UINT8 pixels (tools/model/uint8-input.ts).
  const prepared = await prepareImage(readFixture('basketball1.png'), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox', datatype: 'UINT8' });
  const input: Tensor = { name: 'images', datatype: 'UINT8', shape: [1, 512, 512, 3], data: prepared.tensor };

  const embedded = new OnnxRuntimeBackend({ modelPath: path.join(MODEL_REPOSITORY, MODEL, '1', 'model.onnx'), modelName: MODEL, threads: THREADS });
  let server: ChildServer | undefined;
  let triton: TritonBackend | undefined;
  let real: RealTriton | undefined;
  let realBackend: TritonBackend | undefined;
  try {
    await embedded.start();
    server = await startChildServer();
    triton = new TritonBackend({ url: server.grpcAddress, modelName: MODEL });
    await triton.start();
    let env: ReturnType<typeof pythonEnv>;
    try {
      env = pythonEnv();
    } catch (err) {
      env = { skip: (err as Error).message };
    }
    if ('python' in env) {
      real = await startRealTriton(env.python, { threads: THREADS });
      realBackend = new TritonBackend({ url: real.grpcAddress, modelName: MODEL });
      await realBackend.start();
    } else {
      process.stdout.write(`real Triton: skipped (${env.skip})\n`);
    }
    const statistics = async (b: TritonBackend) => (await b.client.modelStatistics(MODEL, '')).model_stats[0];
    const infer = (b: InferenceBackend) => async (): Promise<void> => void (await b.infer([input]));
    const before = await statistics(triton);
    const realBefore = realBackend && (await statistics(realBackend));
    const one: Candidate[] = [
      { name: 'embedded ONNX Runtime, 1 caller', callers: 1, fn: infer(embedded) },
      { name: 'gRPC → v2 server process, 1 caller', callers: 1, fn: infer(triton) },
    ];
    const many: Candidate[] = [
      { name: `embedded ONNX Runtime, ${CONCURRENCY} callers (FIFO queue)`, callers: CONCURRENCY, fn: infer(embedded) },
      { name: `gRPC → v2 server process, ${CONCURRENCY} callers (batching)`, callers: CONCURRENCY, fn: infer(triton) },
    ];
    if (realBackend) {
      one.push({ name: 'gRPC → real Triton (PyTriton), 1 caller', callers: 1, fn: infer(realBackend) });
      many.push({ name: `gRPC → real Triton (PyTriton), ${CONCURRENCY} callers (batching)`, callers: CONCURRENCY, fn: infer(realBackend) });
    }
    await compare('bare inference, batch 1 per call (basketball1.png at 512×512):', 'inferences', [...one, ...many]);
    describeStatistics('v2 server', before, await statistics(triton));
    if (realBackend && realBefore) describeStatistics('real Triton (its own statistics)', realBefore, await statistics(realBackend));
    await embedded.close();
    await triton.close();
    triton = undefined;
    await realBackend?.close();
    realBackend = undefined;
    await apiThroughput(server.grpcAddress, real?.grpcAddress);
  } finally {
    await embedded.close();
    await triton?.close();
    await realBackend?.close();
    await real?.stop();
    if (server) await stopChildServer(server);
  }
}

/** Requests, executions, mean batch, and per-request queue / per-execution compute times between two snapshots. */
function describeStatistics(name: string, a: ModelStatisticsMsg, b: ModelStatisticsMsg): void {
  const d = (x: { count: number; ns: number }, y: { count: number; ns: number }) => ({ count: y.count - x.count, ns: y.ns - x.ns });
  const ms = (v: { count: number; ns: number }) => (v.count ? (v.ns / v.count / 1e6).toFixed(1) : '-');
  const executions = b.execution_count - a.execution_count;
  const inferences = b.inference_count - a.inference_count;
  const sa = a.inference_stats;
  const sb = b.inference_stats;
  const success = d(sa.success, sb.success);
  const queue = d(sa.queue, sb.queue);
  const input = d(sa.compute_input, sb.compute_input);
  const infer = d(sa.compute_infer, sb.compute_infer);
  const output = d(sa.compute_output, sb.compute_output);
  process.stdout.write(
    `  ${name}: ${inferences} inferences in ${executions} executions, mean batch ${(inferences / Math.max(1, executions)).toFixed(2)}; ` +
      `per request: total ${ms(success)} ms, queue ${ms(queue)} ms; compute (mean per count: Triton counts requests, the v2 server executions): input ${ms(input)} ms, infer ${ms(infer)} ms, output ${ms(output)} ms; ` +
      `[batch size, executions] ${JSON.stringify(b.batch_stats.map((x) => [x.batch_size, x.compute_infer.count]))}\n`,
  );
}

/** POST /v1/cv/requests/sync over loopback HTTP: embedded app vs app on TRITON_URL. */
async function apiThroughput(tritonUrl: string, realTritonUrl: string | undefined): Promise<void> {
  let helpers: typeof import('../test/helpers/app.js');
  try {
    helpers = await import('../test/helpers/app.js');
    const { createTestDatabase } = await import('../test/helpers/services.js');
    await (await createTestDatabase()).drop();
  } catch (err) {
    process.stdout.write(`\nAPI sync throughput: skipped (no test database: ${(err as Error).message})\n`);
    return;
  }
  // A fresh external_id per call: a repeated one would be an idempotent replay, not new work.
  const image = JSON.stringify(readFixture('basketball1.png').toString('base64'));
  let seq = 0;
  const apps: Array<Awaited<ReturnType<typeof helpers.buildTestApp>>> = [];
  try {
    const candidates: Candidate[] = [];
    for (const [name, env] of [
      ['API sync, embedded backend', {}],
      ['API sync, TRITON_URL → v2 server process', { TRITON_URL: tritonUrl }],
      ...(realTritonUrl ? [['API sync, TRITON_URL → real Triton (PyTriton)', { TRITON_URL: realTritonUrl }] as const] : []),
    ] as const) {
      const t = await helpers.buildTestApp({ ...env, INFERENCE_THREADS: String(THREADS), LOG_LEVEL: 'silent' });
      apps.push(t);
      const key = await t.newKey({ rateLimit: 1_000_000, quota: 1_000_000 });
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
      candidates.push({
        name,
        callers: CONCURRENCY,
        fn: async () => {
          const res = await fetch(`${address}/v1/cv/requests/sync`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key.key },
            body: `{"external_id":"bench-${++seq}","image_base64":${image}}`,
          });
          const json = (await res.json()) as { status?: string };
          if (res.status !== 200 || json.status !== 'DONE') throw new Error(`HTTP ${res.status} ${json.status}`);
        },
      });
    }
    await compare(`API sync throughput, ${CONCURRENCY} concurrent clients, basketball1.png as base64 (decode + infer + postprocess + database):`, 'requests', candidates);
  } finally {
    for (const t of apps) await t.close();
  }
}
