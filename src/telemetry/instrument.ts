/**
 * Cross-cutting measurements as small decorators composed around the real clients at the
 * composition root: the clients themselves stay free of metrics and tracing code. Each
 * wrapper keeps the interface it wraps, so callers cannot tell the difference.
 */
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import type { Knex } from 'knex';
import type { InferenceBackend } from '../inference/backend.js';
import { InferenceError, type ObjectDetector } from '../recognition/detection.js';
import type { ImageFetcher, ImageStore } from '../recognition/image-ports.js';
import type { Metrics } from './metrics.js';
import { tracer, withSpan } from './tracing.js';

/** gRPC status code names by number (the gRPC specification's table). */
const GRPC_STATUS_NAMES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS',
  'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE',
  'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
] as const;

/**
 * The gRPC status name of a failed Triton call: the adapter keeps the driver's error as
 * `cause` (a ServiceError with a numeric `code`); errors raised before any call (no
 * connection, bad input) carry only the InferenceError code, whose names are gRPC's too.
 */
export function grpcStatusName(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'number') return GRPC_STATUS_NAMES[cause.code] ?? 'UNKNOWN';
  if (err instanceof InferenceError) return err.code === 'MODEL_NOT_READY' ? 'UNAVAILABLE' : err.code === 'INVALID_INPUT' ? 'INVALID_ARGUMENT' : err.code;
  return 'UNKNOWN';
}

function fail(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
}

/**
 * Inference latency by backend and model (successful calls; failures show up as errors),
 * an `inference` span (a CLIENT span for Triton, whose gRPC call carries its traceparent),
 * and Triton errors by gRPC status.
 */
export function instrumentBackend(backend: InferenceBackend, metrics: Metrics): InferenceBackend {
  const modelName = (): string => {
    try {
      return backend.metadata().name;
    } catch {
      return 'unknown';
    }
  };
  return {
    get kind() {
      return backend.kind;
    },
    start: () => backend.start(),
    metadata: () => backend.metadata(),
    ready: () => backend.ready(),
    close: () => backend.close(),
    infer(inputs, options) {
      const model = modelName();
      const triton = backend.kind === 'triton';
      const attributes = {
        'inference.backend': backend.kind,
        'inference.model': model,
        'inference.batch_size': inputs[0]?.shape[0] ?? 0,
        ...(triton ? { 'rpc.system': 'grpc', 'rpc.service': 'inference.GRPCInferenceService', 'rpc.method': 'ModelInfer' } : {}),
      };
      return tracer().startActiveSpan('inference', { kind: triton ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes }, async (span) => {
        const t0 = performance.now();
        try {
          const out = await backend.infer(inputs, options);
          metrics.observeInference(backend.kind, model, (performance.now() - t0) / 1000);
          return out;
        } catch (err) {
          if (triton) {
            const code = grpcStatusName(err);
            metrics.countTritonError(code);
            span.setAttribute('rpc.grpc.status_code', GRPC_STATUS_NAMES.indexOf(code as never));
          }
          fail(span, err);
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
}

/** Download duration and size (never the URL: it is unbounded and may carry tokens) and an `image.fetch` span. */
export function instrumentFetcher(fetcher: ImageFetcher, metrics: Metrics): ImageFetcher {
  return {
    validate: (url) => fetcher.validate(url),
    fetch(url, options) {
      let host = '';
      try {
        host = new URL(url).hostname;
      } catch {
        // validate() refuses it; the span just has no host
      }
      return tracer().startActiveSpan('image.fetch', { kind: SpanKind.CLIENT, attributes: { 'server.address': host } }, async (span) => {
        const t0 = performance.now();
        try {
          const image = await fetcher.fetch(url, options);
          metrics.observeImageDownload((performance.now() - t0) / 1000, image.bytes.length, true);
          span.setAttributes({ 'http.response.status_code': image.status, 'image.bytes': image.bytes.length, 'image.format': image.format });
          return image;
        } catch (err) {
          metrics.observeImageDownload((performance.now() - t0) / 1000, undefined, false);
          const upstream = (err as { upstreamStatus?: unknown }).upstreamStatus;
          if (typeof upstream === 'number') span.setAttribute('http.response.status_code', upstream);
          fail(span, err);
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
}

/**
 * An `image.store` span around each image write (the storage part of a request's time).
 * Everything else the store offers passes through untouched, whatever the store adds.
 */
export function instrumentImageStore<S extends ImageStore>(store: S): S {
  const put: ImageStore['put'] = (requestId, image) =>
    withSpan('image.store', { 'image.bytes': image.bytes.length }, () => store.put(requestId, image));
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'put') return put;
      const value: unknown = Reflect.get(target, prop, target);
      // Methods run on the store itself (its private fields are not on the proxy).
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A `detect` span around decode → preprocess → inference → postprocess. The inference
 * child is a real span (from instrumentBackend); decode+preprocess and postprocess run
 * inside the detector, so their children are recorded afterwards from the timings the
 * detector reports (start and end set explicitly), in the order the detector runs them.
 */
export function instrumentDetector(detector: ObjectDetector): ObjectDetector {
  return {
    get model() {
      return detector.model;
    },
    labels: () => detector.labels(),
    detect(image, options) {
      return withSpan('detect', { 'image.bytes': image.length }, async (span) => {
        const start = Date.now();
        const out = await detector.detect(image, options);
        span.setAttributes({ 'image.width': out.width, 'image.height': out.height, 'detections.count': out.detections.length });
        const parent = trace.setSpan(context.active(), span);
        const stage = (name: string, from: number, ms: number): void => {
          tracer().startSpan(name, { startTime: from }, parent).end(from + ms);
        };
        stage('image.decode_preprocess', start, out.timings.decodeMs);
        const end = Date.now();
        stage('postprocess', Math.max(start, end - out.timings.postprocessMs), out.timings.postprocessMs);
        return out;
      });
    },
  };
}

/**
 * Database figures: the pool's connections by state at scrape time (knex uses tarn), and
 * a `db` CLIENT span per query (the SQL text has placeholders, never the bound values).
 * Knex emits 'query' from inside the caller's promise chain, so the span finds its parent
 * in the active context. Returns a function that detaches the listeners.
 */
export function instrumentKnex(db: Knex, metrics: Metrics): () => void {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
  metrics.watchPool(() => {
    const p = (db.client as { pool?: typeof pool }).pool ?? pool;
    return p ? { used: p.numUsed(), free: p.numFree(), pending: p.numPendingAcquires() } : { used: 0, free: 0, pending: 0 };
  });

  const open = new Map<string, Span>();
  const onQuery = (q: { __knexQueryUid?: string; sql?: string; method?: string }): void => {
    if (!q.__knexQueryUid || trace.getActiveSpan() === undefined) return; // no trace to join: no span
    // The statement's first keyword (knex's own method says 'raw' or 'first' for many).
    const operation = (q.sql?.trim().split(/\s+/, 1)[0] || q.method || 'query').toUpperCase();
    open.set(
      q.__knexQueryUid,
      tracer().startSpan(`db ${operation}`, {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system': 'postgresql', 'db.operation.name': operation, 'db.query.text': (q.sql ?? '').slice(0, 2048) },
      }),
    );
  };
  const onEnd = (err: unknown, q: { __knexQueryUid?: string }): void => {
    const uid = q?.__knexQueryUid;
    const span = uid === undefined ? undefined : open.get(uid);
    if (!span || uid === undefined) return;
    open.delete(uid);
    if (err instanceof Error) fail(span, err);
    span.end();
  };
  const onResponse = (_response: unknown, q: { __knexQueryUid?: string }): void => onEnd(undefined, q);
  db.on('query', onQuery);
  db.on('query-response', onResponse);
  db.on('query-error', onEnd);
  return () => {
    db.removeListener('query', onQuery);
    db.removeListener('query-response', onResponse);
    db.removeListener('query-error', onEnd);
  };
}

/** A limiter that can report its degraded state (src/limits' LimitsService). */
interface DegradableLimiter {
  mode(): string;
  onDegradedChange(listener: (degraded: boolean) => void): () => void;
}

/** Keeps limiter_degraded in step with the limiter; a no-op for limiters without the hook. */
export function watchLimiter(limits: object, metrics: Metrics): () => void {
  const l = limits as Partial<DegradableLimiter>;
  if (typeof l.onDegradedChange !== 'function' || typeof l.mode !== 'function') return () => {};
  metrics.setLimiterDegraded(l.mode() === 'degraded');
  return l.onDegradedChange((degraded) => metrics.setLimiterDegraded(degraded));
}
