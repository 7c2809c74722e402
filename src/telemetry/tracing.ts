/**
 * OpenTelemetry tracing. The code creates spans through @opentelemetry/api only; with no
 * SDK registered those are no-ops, so tracing costs nothing when it is off. The SDK (OTLP
 * over HTTP, configured by the standard OTEL_* variables) starts only when one of them
 * asks for traces.
 */
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export const TRACER_NAME = 'recognition-service';

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

type Env = Record<string, string | undefined>;

/** True when the environment asks for trace export (the standard OTEL_* variables). */
export function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter !== undefined && exporter !== '') return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (the OTLP/HTTP rule). */
export function tracesEndpoint(env: Env): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

export interface TracingHandle {
  enabled: boolean;
  shutdown(): Promise<void>;
}

/** Starts the OpenTelemetry SDK when the environment asks for it; a no-op handle otherwise. */
export async function startTracing(env: Env, serviceName = 'recognition-service'): Promise<TracingHandle> {
  if (!tracingRequested(env)) return { enabled: false, shutdown: async () => {} };
  // Loaded lazily: the SDK and its exporters are not even imported when tracing is off.
  const [{ NodeSDK }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? serviceName }),
    // The endpoint comes from `env` (the exporter would read process.env itself); the other
    // OTEL_* settings (headers, sampler, timeouts) are read by the SDK from the process.
    traceExporter: new OTLPTraceExporter({ url: tracesEndpoint(env) }),
    instrumentations: [],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}

/**
 * Runs `fn` inside a child span of the active one. The span records the error and ends
 * whether `fn` resolves or throws.
 */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Starts the SERVER span of an incoming request, continuing a W3C traceparent when present. */
export function startServerSpan(name: string, headers: Record<string, unknown>, attributes: Attributes): { span: Span; ctx: Context } {
  const parent = propagation.extract(context.active(), headers);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Writes the active trace context (traceparent, tracestate) into a carrier, e.g. gRPC metadata. */
export function injectTraceContext(setter: (key: string, value: string) => void): void {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  for (const [k, v] of Object.entries(carrier)) setter(k, v);
}

/** The active trace id, for log lines; undefined outside a sampled span. */
export function activeTraceId(): string | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && sc.traceId !== '00000000000000000000000000000000' ? sc.traceId : undefined;
}
