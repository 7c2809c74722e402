/**
 * Which database failures are transient (the server restarting, unreachable, out of
 * connections, a serialization conflict) and whether the failed statement can have run.
 * A statement that certainly did not run is safe to try again, whatever it does; one whose
 * connection broke mid-way may have committed, so only reads are retried then. The API
 * answers what is left 503 DATABASE_UNAVAILABLE with Retry-After.
 */
import { retry } from '../backoff.js';

export interface DbFault {
  /** For logs and metrics. */
  reason: 'unreachable' | 'connection_lost' | 'shutdown' | 'too_many_connections' | 'serialization' | 'pool_timeout';
  /** True when the statement certainly did not take effect (safe to retry any statement). */
  notApplied: boolean;
}

/** Node socket errors: nothing was sent (refused, DNS) or the connection broke (reset). */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const BROKEN = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

/** The transient fault behind `err`, or null for errors a retry will not cure (constraint, syntax, …). */
export function transientDbFault(err: unknown): DbFault | null {
  if (err === null || typeof err !== 'object') return null;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  // AggregateError of every address tried (localhost resolving to ::1 and 127.0.0.1).
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => transientDbFault(x)?.notApplied)) {
    return { reason: 'unreachable', notApplied: true };
  }
  if (NOT_CONNECTED.has(code)) return { reason: 'unreachable', notApplied: true };
  if (BROKEN.has(code)) return { reason: 'connection_lost', notApplied: false };
  switch (code) {
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
      return { reason: 'shutdown', notApplied: false };
    case '57P03': // cannot_connect_now (starting up, shutting down)
      return { reason: 'shutdown', notApplied: true };
    case '53300': // too_many_connections
      return { reason: 'too_many_connections', notApplied: true };
    case '40001': // serialization_failure: rolled back
    case '40P01': // deadlock_detected: rolled back
      return { reason: 'serialization', notApplied: true };
    case '08001': // sqlclient_unable_to_establish_sqlconnection
    case '08004': // sqlserver_rejected_establishment_of_sqlconnection
      return { reason: 'unreachable', notApplied: true };
    case '08000':
    case '08003':
    case '08006':
      return { reason: 'connection_lost', notApplied: false };
  }
  // Knex's pool could not hand out a connection in time: nothing was sent.
  if (e.name === 'KnexTimeoutError') return { reason: 'pool_timeout', notApplied: true };
  // node-postgres reports a dropped connection without a code; knex puts the SQL and " - "
  // before the driver's message.
  if (/(?:^| - )Connection terminated|connection (?:ended|closed) unexpectedly|Client was closed and is not queryable|Client has encountered a connection error/i.test(message)) {
    return { reason: 'connection_lost', notApplied: false };
  }
  return null;
}

export function isTransientDbFault(err: unknown): boolean {
  return transientDbFault(err) !== null;
}

export interface RetryOptions {
  /**
   * True when running `op` twice does no harm (a read, a conditional upsert): any transient
   * fault is retried. False: only faults where the statement certainly did not apply.
   */
  idempotent: boolean;
  /** Give up (rethrow) once this much time has passed since the first try. */
  budgetMs?: number;
  /** Absolute deadline (epoch ms) that also bounds the retries. */
  deadline?: number;
}

/** Default retry budget: a PostgreSQL restart or fail-over usually takes a few seconds. */
export const DB_RETRY_BUDGET_MS = 3_000;

/** Runs `op`, retrying transient faults with backoff within the budget (and the deadline). */
export function withDbRetry<T>(op: () => Promise<T>, options: RetryOptions): Promise<T> {
  const until = Math.min(Date.now() + (options.budgetMs ?? DB_RETRY_BUDGET_MS), options.deadline ?? Number.POSITIVE_INFINITY);
  const retryable = (err: unknown): boolean => {
    const fault = transientDbFault(err);
    return fault !== null && (options.idempotent || fault.notApplied);
  };
  // Every API pod lost the same server: jitter spreads their return.
  return retry(() => op(), { retryable, until, baseMs: 100, capMs: 1_000, jitter: 'equal' });
}
