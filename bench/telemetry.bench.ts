/**
 * What the telemetry plugin costs per request: a trivial route served bare (the raw
 * limit: Fastify's own per-request cost), with the plugin and tracing off (metrics, the
 * request log line at a silenced level, no SDK: the default), and with tracing on (SDK
 * registered, spans batched to an exporter that drops them). In-process inject(), so the
 * figures are CPU time per request (process.cpuUsage) without the network. Target: tracing off adds < 50 µs.
 * Variants alternate in short rounds and the figure is the median of the per-round
 * differences, so load from elsewhere on the machine falls on all alike.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import Fastify, { type FastifyInstance } from 'fastify';
import { REJECTION_REASONS } from '../src/api/errors.js';
import { telemetryPlugin } from '../src/telemetry/http.js';
import { Metrics } from '../src/telemetry/metrics.js';

const ROUNDS = 15;
const ROUND_MS = 300;
const TARGET_OFF_US = 50;

/** Drops every span (measures the SDK's cost, not an exporter's network). */
const dropAll: SpanExporter = {
  export: (_spans: ReadableSpan[], done) => done({ code: 0 }),
  shutdown: async () => {},
};

async function app(withTelemetry: boolean): Promise<FastifyInstance> {
  const a = Fastify({ logger: false });
  if (withTelemetry) await a.register(telemetryPlugin, { metrics: new Metrics({ defaultMetrics: false }), rejectionReasons: REJECTION_REASONS });
  a.get('/v1/cv/requests/:id', async (request) => ({ id: (request.params as { id: string }).id }));
  await a.ready();
  return a;
}

/** CPU time of this process per request (user + system), less sensitive than wall time to other load on the machine. */
async function perRequestUs(a: FastifyInstance, ms: number): Promise<number> {
  const end = performance.now() + ms;
  const cpu = process.cpuUsage();
  let n = 0;
  while (performance.now() < end) {
    const res = await a.inject({ method: 'GET', url: `/v1/cv/requests/${n}`, headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
    n++;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

export async function run(): Promise<void> {
  const bare = await app(false);
  const instrumented = await app(true);
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropAll)] });
  const tracingOff = () => {
    trace.disable();
    context.disable();
    propagation.disable();
  };
  const results = { bare: [] as number[], off: [] as number[], on: [] as number[] };
  try {
    await perRequestUs(bare, 200); // warm-up
    await perRequestUs(instrumented, 200);
    for (let r = 0; r < ROUNDS; r++) {
      tracingOff();
      results.bare.push(await perRequestUs(bare, ROUND_MS));
      results.off.push(await perRequestUs(instrumented, ROUND_MS));
      provider.register();
      results.on.push(await perRequestUs(instrumented, ROUND_MS));
    }
  } finally {
    tracingOff();
    await provider.shutdown();
    await bare.close();
    await instrumented.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const diff = (xs: number[]) => median(xs.map((x, i) => x - results.bare[i]));
  const b = median(results.bare);
  const off = diff(results.off);
  const on = diff(results.on);
  console.log(`bare Fastify (raw limit)     ${b.toFixed(1)} µs CPU/request (median of ${ROUNDS} rounds)`);
  console.log(`telemetry, tracing off        +${off.toFixed(1)} µs/request (target < ${TARGET_OFF_US} µs: ${off < TARGET_OFF_US ? 'met' : 'NOT met'})`);
  console.log(`telemetry, tracing on (SDK)   +${on.toFixed(1)} µs/request`);
}
