/**
 * Logger options (pino, JSON lines). Secrets and image bytes are redacted wherever they
 * could appear: request headers, bodies attached to errors, and any nested object that
 * carries an `x-api-key`, `apiKey`, `key` or `image_base64` field.
 */
import type { LoggerOptions } from 'pino';
import { activeTraceId } from './tracing.js';

export const REDACTED = '[redacted]';

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  '["x-api-key"]',
  'apiKey',
  'key',
  'image_base64',
  'body.image_base64',
  'req.body.image_base64',
  'err.body',
  '*.apiKey',
  '*.image_base64',
  '*["x-api-key"]',
  '*.body.image_base64',
  '*.headers["x-api-key"]',
  '*.headers.authorization',
];

export function loggerOptions(level: string, base: Record<string, unknown> = {}): LoggerOptions {
  return {
    level,
    base: { service: 'recognition-service', ...base },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    // Every line written inside a traced request carries its trace id (nothing when tracing is off).
    mixin() {
      const traceId = activeTraceId();
      return traceId === undefined ? {} : { trace_id: traceId };
    },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
  };
}
