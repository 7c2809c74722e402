/**
 * The one error translation point: whatever failed (a route's validation refusal, the use case's
 * RecognitionRejected, an ImageError, Fastify's own errors, a protocol-level refusal of
 * node's HTTP parser, an unknown route or method) leaves as a catalogue body (error,
 * message, error_code). Client errors keep their message; anything unexpected becomes a
 * generic 500 while the full context goes to the log. The code is also set on the reply
 * (`reply.errorCode`) for telemetry, which never re-reads the body.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ImageError, type ImageErrorCode } from '../images/errors.js';
import { CapacityExceeded } from '../recognition/capacity.js';
import { RecognitionRejected } from '../recognition/errors.js';
import { transientDbFault } from '../store/db-faults.js';
import { ApiError, type ErrorCode } from './errors.js';

declare module 'fastify' {
  interface FastifyReply {
    /** The catalogue code this reply answers with, when it is an error (read by telemetry). */
    errorCode?: ErrorCode;
  }
}

/** ImageError codes that mean "the client sent something unacceptable" rather than "processing failed". */
const CLIENT_IMAGE_CODES: ReadonlySet<ImageErrorCode> = new Set(['INVALID_IMAGE_URL', 'INVALID_IMAGE_BASE64', 'UNSUPPORTED_IMAGE_FORMAT', 'IMAGE_TOO_LARGE']);

/** What a 503 DATABASE_UNAVAILABLE tells the client to wait: about a PostgreSQL restart. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

export function toApiError(err: FastifyError | Error, request?: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RecognitionRejected) {
    const headers: Record<string, string> = {};
    if (err.details.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.details.retryAfterSeconds);
    return new ApiError(err.code, err.message, err.details.externalId !== undefined ? { external_id: err.details.externalId } : {}, headers);
  }
  if (err instanceof ImageError) {
    return CLIENT_IMAGE_CODES.has(err.code) ? new ApiError(err.code as ErrorCode, err.message) : new ApiError('INTERNAL_ERROR');
  }
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('INVALID_PARAMETERS', 'Unsupported Content-Type: send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY': {
      // Answered as the route's schema answers an absent body (src/api/validation.ts refuses with an ApiError).
      const verdict: unknown = request?.getValidationFunction('body')?.(null);
      const refusal = typeof verdict === 'object' && verdict !== null && 'error' in verdict ? verdict.error : undefined;
      return refusal instanceof ApiError ? refusal : new ApiError('INVALID_PARAMETERS', 'The request body is empty');
    }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('INVALID_PARAMETERS', 'The request body is not valid JSON');
    case 'FST_ERR_BAD_URL':
      return new ApiError('MALFORMED_REQUEST', 'The URL is not valid percent-encoded UTF-8');
  }
  if (err instanceof CapacityExceeded) return new ApiError('SERVICE_OVERLOADED', undefined, {}, { 'Retry-After': String(err.retryAfterSeconds) });
  // The database restarting or unreachable is a temporary condition, not a bug: 503, retry.
  if (transientDbFault(err) !== null) return new ApiError('DATABASE_UNAVAILABLE', undefined, {}, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('INVALID_PARAMETERS', fe.message);
  }
  return new ApiError('INTERNAL_ERROR');
}

/** Sends an ApiError as the contract's body and records its code for telemetry. */
export function sendApiError(reply: FastifyReply, apiErr: ApiError): FastifyReply {
  reply.errorCode = apiErr.code;
  return reply.code(apiErr.status).headers(apiErr.headers).send(apiErr.body());
}

/** Fastify's `frameworkErrors` option: errors raised before routing (an undecodable URL). */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiErr = toApiError(err, request);
  request.log.info({ error_code: apiErr.code }, 'request refused');
  void sendApiError(reply, apiErr);
}

/** The refusal written for each kind of client error node's HTTP parser reports. */
function protocolRefusal(err: NodeJS.ErrnoException): ApiError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('CLIENT_TIMEOUT');
  if (err.code === 'HPE_HEADER_OVERFLOW') return new ApiError('HEADERS_TOO_LARGE');
  return new ApiError('MALFORMED_REQUEST');
}

/**
 * Fastify's `clientErrorHandler` (node's 'clientError'): a malformed request line, headers
 * over the limit, or a client too slow to send its request. There is no request object;
 * the answer is written on the socket, with the catalogue body, and the connection closed.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const apiErr = protocolRefusal(err);
  this.log.debug({ err, error_code: apiErr.code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(apiErr.body());
    socket.write(
      `HTTP/1.1 ${apiErr.status} ${http.STATUS_CODES[apiErr.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Methods registered per route pattern, to tell an unknown path (404) from a wrong method (405). */
class RouteTable {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string>; staticPath?: string }> = [];

  static isPattern(url: string): boolean {
    return url.includes(':') || url.includes('*');
  }

  add(url: string, methods: string[]): void {
    const source = url
      .split(/(:[^/]+|\*)/)
      .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    let entry = this.routes.find((r) => r.pattern.source === `^${source}$`);
    if (!entry) {
      entry = { pattern: new RegExp(`^${source}$`), methods: new Set(), staticPath: RouteTable.isPattern(url) ? undefined : url };
      this.routes.push(entry);
    }
    for (const m of methods) entry.methods.add(m);
    if (entry.methods.has('GET')) entry.methods.add('HEAD');
  }

  /**
   * The methods a path has. A path that names a static route is that route's alone: a
   * parametric pattern that also matches it (`/v1/cv/requests/:id` on `/v1/cv/requests/sync`)
   * is not meant for it, so its methods do not count there.
   */
  allowed(path: string): string[] {
    const own = this.staticMethods(path);
    if (own !== undefined) return own;
    const methods = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) for (const m of r.methods) methods.add(m);
    return [...methods].sort();
  }

  /** The methods of the static route at exactly this path, or undefined when there is none. */
  staticMethods(path: string): string[] | undefined {
    const own = this.routes.find((r) => r.staticPath === path);
    return own && [...own.methods].sort();
  }
}

function methodNotAllowed(method: string, path: string, allowed: string[]): ApiError {
  const list = allowed.join(', ');
  return new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; allowed: ${list}`, {}, { Allow: list });
}

/** How a part of the service names a failure in the catalogue (the console has its own word for schema failures). */
export type ErrorTranslation = (err: FastifyError, request: FastifyRequest) => ApiError;

/**
 * The error handler of every encapsulation context (the console's included): translate, log,
 * and send through sendApiError, so each refusal's code reaches the metrics and the log line.
 */
export function errorHandler(translate: ErrorTranslation = toApiError) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const apiErr = translate(err, request);
    if (apiErr.code === 'DATABASE_UNAVAILABLE') request.log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database unavailable');
    else if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ error_code: apiErr.code }, 'request refused');
    void sendApiError(reply, apiErr);
  };
}

export interface ErrorHandling {
  /**
   * onRequest hook: 405 for a request that a parametric route matched on the path of a static
   * route without that method (GET /v1/cv/requests/sync is not a lookup of the id "sync"), before
   * that route's own hooks (authentication) run. Add it after telemetry's hooks, so the
   * refusal is measured and logged like any other.
   */
  refuseShadowedMethods: (request: FastifyRequest) => Promise<void>;
}

export function installErrorHandling(app: FastifyInstance): ErrorHandling {
  const table = new RouteTable();
  app.addHook('onRoute', (route) => {
    table.add(route.url, Array.isArray(route.method) ? route.method : [route.method]);
  });
  app.setErrorHandler(errorHandler());
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = table.allowed(path);
    void sendApiError(reply, allowed.length > 0 ? methodNotAllowed(request.method, path, allowed) : new ApiError('ROUTE_NOT_FOUND', `No endpoint ${request.method} ${path}`));
  });
  return {
    refuseShadowedMethods: async (request) => {
      const route = request.routeOptions.url;
      if (route === undefined || !RouteTable.isPattern(route)) return;
      const path = request.url.split('?')[0];
      const own = table.staticMethods(path);
      if (own !== undefined && !own.includes(request.method)) throw methodNotAllowed(request.method, path, own);
    },
  };
}
