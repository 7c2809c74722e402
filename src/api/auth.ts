/**
 * x-api-key authentication and the per-key rate limit, in the contract's order:
 * header → known → not expired → active → organisation active → classes → rate limit.
 * Quota and balance follow in the use case (they depend on the work to do).
 * The key is read from the database on every call (one statement, which also records its
 * use): a suspension applies to the next request on every replica, with no cache to expire.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import type { Limits, RateBucket } from '../limits/types.js';
import type { Caller } from '../recognition/service.js';
import { findKeyForAuth } from '../store/keys.js';
import { withDbRetry } from '../store/db-faults.js';
import { ApiError } from './errors.js';

export const API_KEY_HEADER = 'x-api-key';
/** Longer than any key we issue; anything longer is refused without a lookup. */
const MAX_KEY_LENGTH = 256;

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

export interface AuthOptions {
  db: Knex;
  limits: Limits;
}

/** The key's identity and permissions, or the first contract error it fails. */
export async function authenticate(db: Knex, header: string | string[] | undefined, requireClasses: boolean, now = new Date()): Promise<Caller> {
  const presented = Array.isArray(header) ? header[0] : header;
  if (presented === undefined || presented.trim() === '') throw new ApiError('MISSING_API_KEY');
  if (presented.length > MAX_KEY_LENGTH) throw new ApiError('INVALID_API_KEY');
  const found = await withDbRetry(() => findKeyForAuth(db, presented.trim()), { idempotent: true });
  if (found === null) throw new ApiError('INVALID_API_KEY');
  const { key, org } = found;
  if (key.expires_at !== null && key.expires_at.getTime() <= now.getTime()) throw new ApiError('API_KEY_EXPIRED');
  if (key.status === 'revoked') throw new ApiError('KEY_REVOKED');
  if (key.status === 'suspended') throw new ApiError('KEY_SUSPENDED');
  if (org.status !== 'active') throw new ApiError('ORGANIZATION_SUSPENDED');
  if (requireClasses && key.classes.length === 0) throw new ApiError('NO_CLASSES');
  return {
    keyId: key.id,
    orgId: key.org_id,
    classes: key.classes,
    limits: { keyId: key.id, orgId: key.org_id, rateLimitPerMinute: key.rate_limit_per_minute, monthlyQuota: key.monthly_quota },
  };
}

/** onRequest hook: authenticates, then counts the call against the key's window for `bucket`. */
export function guard(options: AuthOptions, bucket: RateBucket) {
  const requireClasses = bucket === 'recognition';
  return async function guardHook(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = await authenticate(options.db, request.headers[API_KEY_HEADER], requireClasses);
    request.caller = caller;

    const decision = await options.limits.checkRate(caller.limits, bucket);
    reply.header('RateLimit-Limit', String(decision.limit));
    reply.header('RateLimit-Remaining', String(Math.max(0, decision.remaining)));
    reply.header('RateLimit-Reset', String(Math.max(0, Math.ceil(decision.resetSeconds))));
    if (!decision.allowed) {
      const retry = Math.max(1, Math.ceil(decision.retryAfterSeconds ?? decision.resetSeconds));
      throw new ApiError('RATE_LIMITED', `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${retry} s`, {}, { 'Retry-After': String(retry) });
    }
  };
}

/** The caller set by guard(); routes behind guard() always have one. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route is missing its guard hook');
  return request.caller;
}
