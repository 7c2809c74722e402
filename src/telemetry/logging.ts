/**
 * Logger options (pino, JSON lines). Secrets and image bytes are redacted wherever they
 * could appear: request headers (API key, authorization, cookies), bodies attached to errors,
 * and any nested object that carries an `x-api-key`, `apiKey`, `key` or `image_base64` field;
 * and the credential query parameters of signed URLs (`signature`, `X-Amz-Signature`,
 * `X-Amz-Credential`, `X-Amz-Security-Token`) anywhere in a line.
 */
import type { LoggerOptions } from 'pino';
import { activeTraceId } from './tracing.js';

export const REDACTED = '[redacted]';

export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.cookie',
  '*.headers.cookie',
  'res.headers["set-cookie"]',
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

/**
 * Query parameters that are credentials: the signature of the API's own image links, and a
 * presigned S3 link's signature, access key id (with its scope) and session token. Matched by
 * name in any case, after `?`, `&` or `;`, also inside a percent-encoded URL (`%3F`, `%26`).
 */
const URL_SECRET = /((?:[?&;]|%3F|%26)(?:signature|x-amz-signature|x-amz-credential|x-amz-security-token)(?:=|%3D))[^&#"'\s\\]*/gi;

/** Replaces the value of every credential query parameter in `text` (the rest of the URL stays). */
export function redactUrlSecrets(text: string): string {
  return text.replace(URL_SECRET, `$1${REDACTED}`);
}

export function loggerOptions(level: string, base: Record<string, unknown> = {}): LoggerOptions {
  return {
    level,
    base: { service: 'recognition-service', ...base },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    // Signed URLs can reach a line anywhere (a field, an error's message or stack, the message
    // itself): their credentials are taken out of the finished line, whatever put them there.
    hooks: { streamWrite: redactUrlSecrets },
    // Every line written inside a traced request carries its trace id (nothing when tracing is off).
    mixin() {
      const traceId = activeTraceId();
      return traceId === undefined ? {} : { trace_id: traceId };
    },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
  };
}
