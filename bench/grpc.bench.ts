/**
 * Inference throughput through KServe v2 gRPC (TritonBackend → the local v2 server, which
 * runs the same ONNX Runtime session behind a dynamic batcher) next to the embedded
 * backend, its raw limit, in the same run on the same machine; then the API's sync
 * throughput (POST /v1/cv/requests/sync over real HTTP on loopback) on both backends.
 *
 * Each phase runs for BENCH_SECONDS (default 6) after a short warm-up, with a fixed
 * number of callers; only one model session works at a time, so phases do not compete.
 * The API part needs the test PostgreSQL (TEST_DATABASE_URL) and is skipped without it.
 */
import os from 'node:os';
import path from 'node:path';
import type { InferenceBackend, Tensor } from '../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../src/inference/onnxruntime-backend.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { TritonBackend } from '../src/inference/triton/triton-backend.js';
import { startV2Server, type V2Server } from '../src/inference/v2-server/server.js';
import { REPO_ROOT, readFixture } from '../test/helpers/fixtures.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARMUP_MS = 1_500;
const CONCURRENCY = 4;
const MODEL_REPOSITORY = path.join(REPO_ROOT, 'model-repository');
const MODEL = 'centernet';
const THREADS = os.availableParallelism();

interface Rate {
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  errors: number;
  firstError?: string;
}

/** `callers` loops calling `fn` back to back for SECONDS; returns completions per second. */
async function measure(callers: number, fn: () => Promise<void>): Promise<Rate> {
  const warmUntil = Date.now() + WARMUP_MS;
  const workers = Array.from({ length: callers }, async () => {
    while (Date.now() < warmUntil) await fn().catch(() => {});
  });
  await Promise.all(workers);
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await fn();
          latencies.push(performance.now() - t0);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { perSecond: latencies.length / elapsed, p50Ms: at(0.5), p95Ms: at(0.95), errors, firstError };
}

function line(name: string, r: Rate, limit?: number): void {
  const ratio = limit ? `   ${(r.perSecond / limit).toFixed(2)}× embedded` : '';
  const errors = r.errors ? `   errors ${r.errors} (first: ${r.firstError})` : '';
  process.stdout.write(`${name.padEnd(52)} ${r.perSecond.toFixed(2).padStart(7)} /s   p50 ${r.p50Ms.toFixed(0).padStart(5)} ms   p95 ${r.p95Ms.toFixed(0).padStart(5)} ms${ratio}${errors}\n`);
}

export async function run(): Promise<void> {
  process.stdout.write(`${os.availableParallelism()} cores, ONNX Runtime ${THREADS} threads, ${SECONDS} s per phase, ${CONCURRENCY} concurrent callers where noted\n`);
  const prepared = await prepareImage(readFixture('basketball1.png'), { width: 512, height: 512 }, { maxPixels: 40_000_000, fit: 'letterbox' });
  const input: Tensor = { name: 'images', datatype: 'FP32', shape: [1, 512, 512, 3], data: prepared.tensor };

  // --- bare inference: embedded vs gRPC ----------------------------------------------------
  const embedded = new OnnxRuntimeBackend({ modelPath: path.join(MODEL_REPOSITORY, MODEL, '1', 'model.onnx'), modelName: MODEL, threads: THREADS });
  await embedded.start();
  const infer = (b: InferenceBackend) => async (): Promise<void> => void (await b.infer([input]));
  const embedded1 = await measure(1, infer(embedded));
  const embeddedN = await measure(CONCURRENCY, infer(embedded));
  await embedded.close();

  let server: V2Server | undefined;
  let triton: TritonBackend | undefined;
  try {
    server = await startV2Server({
      modelRepository: MODEL_REPOSITORY,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: THREADS }),
    });
    triton = new TritonBackend({ url: server.grpcAddress, modelName: MODEL });
    await triton.start();
    const grpc1 = await measure(1, infer(triton));
    const before = server.statistics(MODEL)[0]!;
    const grpcN = await measure(CONCURRENCY, infer(triton));
    const after = server.statistics(MODEL)[0]!;
    const executions = after.execution_count - before.execution_count;
    const inferences = after.inference_count - before.inference_count;

    process.stdout.write('\nbare inference, batch 1 per call (basketball1.png, 512×512):\n');
    line('embedded ONNX Runtime, 1 caller (raw limit)', embedded1);
    line(`embedded ONNX Runtime, ${CONCURRENCY} callers (FIFO queue)`, embeddedN, embedded1.perSecond);
    line('gRPC → local v2 server, 1 caller', grpc1, embedded1.perSecond);
    line(`gRPC → local v2 server, ${CONCURRENCY} callers (dynamic batching)`, grpcN, embedded1.perSecond);
    process.stdout.write(`  v2 server while ${CONCURRENCY} callers ran (warm-up included): ${inferences} inferences in ${executions} executions, mean batch ${(inferences / Math.max(1, executions)).toFixed(2)}; batch sizes ${JSON.stringify(after.batch_stats.map((b) => [b.batch_size, b.compute_infer.count]))}\n`);

    await triton.close();
    triton = undefined;
    await apiThroughput(server);
  } finally {
    await triton?.close();
    await server?.close({ graceMs: 2_000 });
  }
}

/** POST /v1/cv/requests/sync over loopback HTTP: embedded app vs app on TRITON_URL. */
async function apiThroughput(server: V2Server): Promise<void> {
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
  const results: Array<[string, Rate]> = [];
  for (const [name, env] of [
    ['API sync, embedded backend', {}],
    ['API sync, TRITON_URL → local v2 server', { TRITON_URL: server.grpcAddress }],
  ] as const) {
    const t = await helpers.buildTestApp({ ...env, INFERENCE_THREADS: String(THREADS), LOG_LEVEL: 'silent' });
    try {
      const key = await t.newKey({ rateLimit: 1_000_000, quota: 1_000_000 });
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
      const post = async (): Promise<void> => {
        const res = await fetch(`${address}/v1/cv/requests/sync`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.key }, body: `{"external_id":"bench-${++seq}","image_base64":${image}}` });
        const json = (await res.json()) as { status?: string };
        if (res.status !== 200 || json.status !== 'DONE') throw new Error(`HTTP ${res.status} ${json.status}`);
      };
      results.push([name, await measure(CONCURRENCY, post)]);
    } finally {
      await t.close();
    }
  }
  process.stdout.write(`\nAPI sync throughput, ${CONCURRENCY} concurrent clients, basketball1.png as base64 (decode + infer + postprocess + database):\n`);
  const base = results[0]![1].perSecond;
  results.forEach(([name, r], i) => line(name, r, i === 0 ? undefined : base));
}
