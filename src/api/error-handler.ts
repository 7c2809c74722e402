/**
 * The one error handler: every failure leaves as a catalogue body (error, message,
 * error_code). Client errors keep their message; anything unexpected becomes a generic
 * 500 while the full context goes to the log.
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { RecognitionRejected } from '../recognition/errors.js';
import { transientDbFault } from '../store/db-faults.js';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Maps a body/params that failed its schema (or could not be parsed) to the route's contract error. */
    invalid?: (input: unknown) => ApiError;
    /** Which input `invalid` inspects. */
    invalidSource?: 'body' | 'params';
  }
}

function routeInvalid(request: FastifyRequest, input: unknown, fallback: string): ApiError {
  const map = request.routeOptions.config.invalid;
  return map ? map(input) : new ApiError('INVALID_PARAMETERS', fallback);
}

/** What a 503 DATABASE_UNAVAILABLE tells the client to wait: about a PostgreSQL restart. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

export function toApiError(err: FastifyError | Error, request: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RecognitionRejected) {
    const headers: Record<string, string> = {};
    if (err.details.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.details.retryAfterSeconds);
    return new ApiError(err.code, err.message, err.details.externalId !== undefined ? { external_id: err.details.externalId } : {}, headers);
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const source = request.routeOptions.config.invalidSource ?? 'body';
    const input = source === 'params' ? request.params : request.body;
    return routeInvalid(request, input, `Invalid parameters: ${fe.message}`);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('INVALID_PARAMETERS', 'Unsupported Content-Type: send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return routeInvalid(request, undefined, 'The request body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('INVALID_PARAMETERS', 'The request body is not valid JSON');
  }
  // The database restarting or unreachable is a temporary condition, not a bug: 503, retry.
  if (transientDbFault(err) !== null) return new ApiError('DATABASE_UNAVAILABLE', undefined, {}, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError('INVALID_PARAMETERS', fe.message);
  }
  return new ApiError('INTERNAL_ERROR');
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiErr = toApiError(err, request);
    if (apiErr.code === 'DATABASE_UNAVAILABLE') request.log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database unavailable');
    else if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ error_code: apiErr.code }, 'request refused');
    void reply.code(apiErr.status).headers(apiErr.headers).send(apiErr.body());
  });
  app.setNotFoundHandler((request, reply) => {
    const e = new ApiError('ROUTE_NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]}`);
    void reply.code(e.status).send(e.body());
  });
}
