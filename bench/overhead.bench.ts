/**
 * `npm run bench -- overhead`: where the API's time goes at ONE caller (embedded backend,
 * real HTTP on loopback, PostgreSQL from TEST_DATABASE_URL), from the service's own spans
 * recorded in memory: per request, the client's round trip, the SERVER span, detect's
 * decode+preprocess / inference / postprocess, the image storage write and the sum of the db
 * spans. What is left of the SERVER span (base64 + JSON parsing, routing, reply) and what lies
 * between the client and the SERVER span (HTTP on loopback, body upload) are differences.
 * Medians over REQUESTS calls; spans cost a little themselves.
 */
import os from 'node:os';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { loadConfig } from '../src/config.js';
import { readFixture } from '../test/helpers/fixtures.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40);
const ms = (s: ReadableSpan): number => s.duration[0] * 1000 + s.duration[1] / 1e6;
const median = (v: number[]): number => {
  const s = [...v].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function run(): Promise<void> {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  let helpers: typeof import('../test/helpers/app.js');
  try {
    helpers = await import('../test/helpers/app.js');
    const { createTestDatabase } = await import('../test/helpers/services.js');
    await (await createTestDatabase()).drop();
  } catch (err) {
    process.stdout.write(`skipped: needs the test PostgreSQL (TEST_DATABASE_URL): ${(err as Error).message}\n`);
    return;
  }
  // The service's inference threads, not the test app's one.
  const api = await helpers.buildTestApp({ INFERENCE_THREADS: String(loadConfig().inferenceThreads), LOG_LEVEL: 'silent' });
  try {
    const key = await api.newKey({ rateLimit: 1_000_000, quota: 1_000_000 });
    const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
    const body = JSON.stringify(readFixture('basketball1.png').toString('base64'));
    const rows: Record<string, number[]> = { client: [], server: [], decode: [], inference: [], postprocess: [], db: [], dbCount: [], store: [], rest: [], http: [] };
    for (let i = -5; i < REQUESTS; i++) {
      exporter.reset();
      const t0 = performance.now();
      const res = await fetch(`${address}/v1/cv/requests/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key.key },
        body: `{"external_id":"overhead-${process.pid}-${i}","image_base64":${body}}`,
      });
      await res.json();
      const client = performance.now() - t0;
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      let spans = exporter.getFinishedSpans();
      for (let k = 0; k < 50 && !spans.some((s) => s.kind === SpanKind.SERVER); k++) {
        await new Promise((r) => setTimeout(r, 5));
        spans = exporter.getFinishedSpans();
      }
      if (i < 0) continue; // warm-up
      const sum = (pred: (s: ReadableSpan) => boolean) => spans.filter(pred).reduce((a, s) => a + ms(s), 0);
      const server = sum((s) => s.kind === SpanKind.SERVER);
      const detect = sum((s) => s.name === 'detect');
      const db = sum((s) => s.name.startsWith('db '));
      const store = sum((s) => s.name === 'image.store');
      rows.client.push(client);
      rows.server.push(server);
      rows.decode.push(sum((s) => s.name === 'image.decode_preprocess'));
      rows.inference.push(sum((s) => s.name === 'inference'));
      rows.postprocess.push(sum((s) => s.name === 'postprocess'));
      rows.db.push(db);
      rows.dbCount.push(spans.filter((s) => s.name.startsWith('db ')).length);
      rows.store.push(store);
      rows.rest.push(server - detect - db - store);
      rows.http.push(client - server);
    }
    const line = (label: string, k: string, unit = 'ms') => `  ${label.padEnd(58)} ${median(rows[k]).toFixed(1).padStart(7)} ${unit}`;
    process.stdout.write(
      [
        `${os.availableParallelism()} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${REQUESTS} sync calls one after another, basketball1.png as base64 (${body.length} bytes); medians`,
        line('client round trip (fetch → JSON parsed)', 'client'),
        line('SERVER span (Fastify onRequest → response)', 'server'),
        line('  decode + resize (sharp)', 'decode'),
        line('  inference (embedded ONNX Runtime)', 'inference'),
        line('  postprocess', 'postprocess'),
        line('  database (sum of db spans)', 'db'),
        line('    db statements per request', 'dbCount', ''),
        line('  image storage write (image.store span)', 'store'),
        line('  rest: base64/JSON parse, auth logic, routing, reply', 'rest'),
        line('HTTP on loopback (client round trip − SERVER span)', 'http'),
      ].join('\n') + '\n',
    );
  } finally {
    await api.close();
    await provider.shutdown();
    trace.disable();
  }
}
