/**
 * The console: the session-authenticated console API under /console/api/v1 and the web
 * app under /console, as one encapsulated Fastify plugin. Errors leave through the service's
 * one error handler (src/api/error-handler.ts) with the console's translation: schema
 * failures are VALIDATION_FAILED, everything else the public API's catalogue code.
 */
import cookie from '@fastify/cookie';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import { ApiError } from '../api/errors.js';
import { errorHandler, toApiError } from '../api/error-handler.js';
import type { ImageUrlSigner } from '../images/types.js';
import { readCatalog, type CatalogConfig } from '../models/catalog-source.js';
import { authRoutes } from './auth-routes.js';
import { invitationRoutes } from './invitation-routes.js';
import { createSmtpMailer } from './mail.js';
import { mfaRoutes, orgMfaGate } from './mfa.js';
import type { ConsoleContext } from './context.js';
import { orgRoutes } from './org-routes.js';
import { refusalCounter } from './refusals.js';
import { consoleSchemas } from './schemas.js';
import { consoleCookiesHook } from './session-auth.js';
import { PasswordHasher, PasswordHashingBusy } from './passwords.js';
import { AttemptThrottled, DEFAULT_THROTTLE, LoginThrottle, type ThrottlePolicies } from './throttle.js';
import { DEFAULT_ASSETS_DIR, webRoutes } from './web.js';

export const CONSOLE_PREFIX = '/console';
export const CONSOLE_API_PREFIX = '/console/api/v1';
/** Console bodies are small JSON documents. */
const BODY_LIMIT = 64 * 1024;

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleOptions {
  db: Knex;
  signer: ImageUrlSigner;
  config: Pick<
    Config,
    | 'consoleEnabled'
    | 'consoleAccessTtlSeconds'
    | 'consoleSessionTtlSeconds'
    | 'consoleSessionIdleSeconds'
    | 'publicBaseUrl'
    | 'rateLimitPerMinute'
    | 'defaultMonthlyQuota'
    | 'smtpUrl'
    | 'smtpFrom'
  > &
    CatalogConfig;
  throttle?: ThrottlePolicies;
  /** Password hashing behind its bounded queue (default: scrypt, DEFAULT_PASSWORD_QUEUE). */
  passwords?: PasswordHasher;
  assetsDir?: string;
  /** The clock TOTP codes are checked against (default Date.now; tests drive it). */
  clock?: () => number;
}

/** Registers the refusal counter always (so usage has history), and the console when enabled. */
export async function registerConsole(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  await app.register(refusalCounter, { db: options.db });
  if (!options.config.consoleEnabled) return;
  // On the root, beside the public API's: the answers refer to them and /openapi.json lists them.
  for (const schema of consoleSchemas) app.addSchema(schema);
  await app.register(consolePlugin, { ...options, prefix: CONSOLE_PREFIX });
}

/** The console's word for a schema failure or any other unreadable input is VALIDATION_FAILED. */
function consoleApiError(err: FastifyError, request: FastifyRequest): ApiError {
  if (err.validation) return new ApiError('VALIDATION_FAILED', `Invalid ${err.validationContext ?? 'request'}: ${err.message}`);
  if (err instanceof AttemptThrottled) {
    return new ApiError('LOGIN_THROTTLED', `Too many failed sign-ins; try again in ${err.retryAfterSeconds} s`, {}, { 'Retry-After': String(err.retryAfterSeconds) });
  }
  if (err instanceof PasswordHashingBusy) return new ApiError('PASSWORD_HASHING_BUSY', undefined, {}, { 'Retry-After': String(err.retryAfterSeconds) });
  const apiErr = toApiError(err, request);
  return apiErr.code === 'INVALID_PARAMETERS' ? new ApiError('VALIDATION_FAILED', apiErr.message) : apiErr;
}

async function consolePlugin(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { config } = options;
  let labels: Promise<string[]> | undefined;
  const ctx: ConsoleContext = {
    db: options.db,
    signer: options.signer,
    labels: () => {
      labels ??= readCatalog(config).then((c) => c.classes.map((k) => k.label));
      labels.catch(() => (labels = undefined));
      return labels;
    },
    throttle: new LoginThrottle(options.db, options.throttle ?? DEFAULT_THROTTLE),
    passwords: options.passwords ?? new PasswordHasher(),
    ttl: { accessSeconds: config.consoleAccessTtlSeconds, refreshSeconds: config.consoleSessionTtlSeconds, idleSeconds: config.consoleSessionIdleSeconds },
    secureCookies: config.publicBaseUrl.startsWith('https:'),
    defaultRateLimitPerMinute: config.rateLimitPerMinute,
    defaultMonthlyQuota: config.defaultMonthlyQuota,
    publicBaseUrl: config.publicBaseUrl,
    mailer: config.smtpUrl !== undefined && config.smtpFrom !== undefined ? createSmtpMailer({ url: config.smtpUrl, from: config.smtpFrom }) : undefined,
    now: options.clock ?? Date.now,
  };

  app.addHook('onClose', async () => ctx.mailer?.close());
  await app.register(cookie);
  // Which cookies this request uses: `__Host-` ones when Secure (session-auth.ts).
  app.addHook('onRequest', consoleCookiesHook(ctx.secureCookies));
  app.addHook('onRoute', (route) => {
    route.bodyLimit = route.bodyLimit ?? BODY_LIMIT;
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('Content-Security-Policy', CONSOLE_CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    if (request.url.startsWith(CONSOLE_API_PREFIX) && !reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
  });
  // The one error handler, with the console's translation: its code reaches metrics and logs.
  app.setErrorHandler(errorHandler(consoleApiError));

  // Members of an organisation that requires a second factor, and who have none, are refused its routes.
  app.addHook('preHandler', orgMfaGate(ctx, CONSOLE_API_PREFIX));
  await app.register(authRoutes(ctx), { prefix: '/api/v1' });
  await app.register(mfaRoutes(ctx), { prefix: '/api/v1' });
  await app.register(orgRoutes(ctx), { prefix: '/api/v1' });
  await app.register(invitationRoutes(ctx), { prefix: '/api/v1' });
  await app.register(webRoutes, { assetsDir: options.assetsDir ?? DEFAULT_ASSETS_DIR });
}
