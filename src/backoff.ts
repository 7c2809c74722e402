/**
 * Exponential backoff, one way everywhere: the wait before retry `attempt` (0 for the first
 * retry) is base · 2^attempt, capped. Jitter is chosen per caller:
 * - 'none': the exact ladder, for a single process retrying its own work (a relaunch, a
 *   work queue key) where nobody else retries in step with it;
 * - 'equal': a uniform draw in [delay/2, delay], for clients of a shared server (the
 *   database, Redis) so that pods which lost it together do not come back together, while
 *   no wait is shorter than half the ladder's.
 * Like deadline.ts this is the shared kernel: it imports no room, and every room may use it.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Backoff {
  /** The first retry's wait (ms). */
  baseMs: number;
  /** No wait is longer (ms). */
  capMs: number;
  /** Default 'none'. */
  jitter?: 'none' | 'equal';
}

/** The wait (ms) before retry number `attempt`, counted from 0. `random` is for tests. */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  // The exponent stops growing long after any cap is reached, so the product stays finite.
  const ladder = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.min(Math.max(0, attempt), 40));
  return backoff.jitter === 'equal' ? ladder / 2 + (random() * ladder) / 2 : ladder;
}

export interface RetryOptions extends Backoff {
  /** Whether a failure is worth another try; any other is thrown at once. */
  retryable(err: unknown): boolean;
  /** Tries in all, the first included; default unbounded. */
  maxAttempts?: number;
  /** Epoch ms: gives up, with the last failure, rather than wait past it. */
  until?: number;
  /** Aborting ends the wait: the last failure is thrown. */
  signal?: AbortSignal;
}

/** Runs `op` until it succeeds, retrying retryable failures with backoff within the bounds. */
export async function retry<T>(op: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op(attempt);
    } catch (err) {
      if (!options.retryable(err) || attempt + 1 >= (options.maxAttempts ?? Infinity)) throw err;
      const wait = backoffDelay(attempt, options);
      if (Date.now() + wait >= (options.until ?? Infinity) || options.signal?.aborted) throw err;
      if (wait > 0) await sleep(wait, undefined, { signal: options.signal }).catch(() => Promise.reject(err));
    }
  }
}
