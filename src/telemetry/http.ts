/**
 * The HTTP side of observability, as one Fastify plugin (not encapsulated, so its hooks see
 * every route): the request duration histogram and in-flight gauge, the SERVER span of each
 * request (continuing an incoming W3C traceparent) with an `auth` child around the route's
 * guard, one JSON log line per request, rejections by reason (from the error body's
 * error_code), and GET /metrics. Recognitions by outcome come from the use case's observer.
 */
import { context, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics, RejectionReason } from './metrics.js';
import { startServerSpan, tracer } from './tracing.js';

export interface TelemetryPluginOptions {
  metrics: Metrics;
  /** Serve GET /metrics on this app (default true). */
  exposeMetrics?: boolean;
  /**
   * Which error codes (`reply.errorCode`) count as which rejection reason: the API's
   * catalogue says (REJECTION_REASONS in src/api/errors.ts); telemetry imports no API module.
   */
  rejectionReasons: Readonly<Partial<Record<string, RejectionReason>>>;
}


/** Probes and scrapes: counted, but neither traced nor logged above debug (they come every few seconds). */
const OPERATIONAL_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

const CLIENT_CLOSED = 499;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Characters of a key that are safe to log: the readable prefix plus 8 (as stored in api_keys.prefix). */
const KEY_PREFIX_CHARS = 12;

interface RequestTelemetry {
  start: number;
  route: string;
  span?: Span;
  ctx: Context;
  authSpan?: Span;
  endInFlight: () => void;
  errorCode?: string;
}

const state = new WeakMap<FastifyRequest, RequestTelemetry>();

function validTraceId(id: string | undefined): string | undefined {
  return id && id !== '00000000000000000000000000000000' ? id : undefined;
}

/** The caller's trace id from a W3C traceparent, so logs correlate even while tracing is off. */
function incomingTraceId(header: string | string[] | undefined): string | undefined {
  const m = typeof header === 'string' ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(header.trim()) : null;
  return validTraceId(m?.[1]);
}

const plugin: FastifyPluginAsync<TelemetryPluginOptions> = async (app, opts) => {
  const { metrics, rejectionReasons } = opts;
  // Routes with their own onRequest hooks are the guarded ones: their hooks get an `auth` span.
  const guarded = new Set<string>();
  app.addHook('onRoute', (route) => {
    if (route.onRequest === undefined || (Array.isArray(route.onRequest) && route.onRequest.length === 0)) return;
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) guarded.add(`${m} ${route.url}`);
  });

  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    const t: RequestTelemetry = { start: performance.now(), route, ctx: context.active(), endInFlight: metrics.trackInFlight() };
    state.set(request, t);
    // A client that hangs up mid-request gets neither onResponse nor onRequestAbort (the
    // latter only covers uploads): the response's 'close' before anything was sent says so.
    reply.raw.once('close', () => {
      if (!reply.raw.writableEnded) finish(request, reply, true);
    });
    if (OPERATIONAL_ROUTES.has(route)) return done();
    const { span, ctx } = startServerSpan(`${method} ${route}`, request.headers, {
      'http.request.method': method,
      'http.route': route,
    });
    t.span = span;
    t.ctx = ctx;
    if (!guarded.has(`${request.method} ${route}`)) return context.with(ctx, done);
    t.authSpan = tracer().startSpan('auth', {}, ctx);
    context.with(trace.setSpan(ctx, t.authSpan), done);
  });

  // Body parsing runs on the socket's events, outside our context: step back into it at
  // each later stage so the handler (and everything it awaits) joins the request's trace.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const t = state.get(request);
    if (t?.authSpan) {
      t.authSpan.end();
      t.authSpan = undefined;
    }
    if (!t) return done(null, payload);
    context.with(t.ctx, () => done(null, payload));
  });
  const reenter = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    const t = state.get(request);
    if (!t) return done();
    context.with(t.ctx, done);
  };
  app.addHook('preValidation', reenter);
  app.addHook('preHandler', reenter);

  app.addHook('onSend', async (request, reply, payload) => {
    const t = state.get(request);
    // Every refusal leaves through the one error translation point (src/api/error-handler.ts),
    // which names its catalogue code on the reply: the single place rejections are classified.
    if (t && reply.statusCode >= 400 && reply.errorCode !== undefined) t.errorCode = reply.errorCode;
    return payload;
  });

  /** Records the request once: at onResponse, or when the client hung up first (`aborted`). */
  const finish = (request: FastifyRequest, reply: FastifyReply, aborted: boolean): void => {
    const t = state.get(request);
    if (!t) return;
    state.delete(request);
    t.endInFlight();
    const seconds = (performance.now() - t.start) / 1000;
    // 499: the client closed the request (nginx's name for it).
    const status = aborted ? CLIENT_CLOSED : reply.statusCode;
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    metrics.observeHttp(method, t.route, status, seconds);

    const reason = t.errorCode === undefined ? undefined : rejectionReasons[t.errorCode];
    if (reason !== undefined) metrics.countRejection(reason);
    // Per organisation as well: one customer out of quota is a ticket, not an outage.
    if ((reason === 'quota' || reason === 'balance') && request.caller) metrics.countOrganisationLimitRejection(request.caller.orgId, reason);

    if (t.authSpan) {
      // Still open: the guard refused the request.
      t.authSpan.setStatus({ code: SpanStatusCode.ERROR, message: t.errorCode ?? `HTTP ${status}` });
      t.authSpan.end();
    }
    if (t.span) {
      t.span.setAttribute('http.response.status_code', status);
      if (t.errorCode) t.span.setAttribute('error.type', t.errorCode);
      if (status >= 500 || aborted) t.span.setStatus({ code: SpanStatusCode.ERROR, message: aborted ? 'client closed the request' : t.errorCode ?? `HTTP ${status}` });
      t.span.end();
    }

    const traceId = validTraceId(t.span?.spanContext().traceId) ?? incomingTraceId(request.headers.traceparent);
    const header = request.caller ? request.headers['x-api-key'] : undefined;
    const line = {
      trace_id: traceId,
      // The readable prefix of an authenticated key only (an unknown "key" may be a pasted secret).
      key_prefix: typeof header === 'string' ? header.trim().slice(0, KEY_PREFIX_CHARS) : undefined,
      org_id: request.caller?.orgId,
      key_id: request.caller?.keyId,
      method,
      route: t.route,
      status_code: status,
      duration_ms: Math.round(seconds * 1e4) / 10,
      error_code: t.errorCode,
    };
    if (OPERATIONAL_ROUTES.has(t.route)) request.log.debug(line, 'request');
    else if (status >= 500) request.log.error(line, 'request');
    else request.log.info(line, 'request');
  };
  app.addHook('onResponse', async (request, reply) => finish(request, reply, false));

  if (opts.exposeMetrics ?? true) {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const text = await metrics.render();
      return reply.header('Content-Type', metrics.contentType()).send(text);
    });
  }
};

/** Register before the routes (it watches route registration to find the guarded ones). */
export const telemetryPlugin = fp(plugin, { name: 'telemetry', fastify: '5.x' });
