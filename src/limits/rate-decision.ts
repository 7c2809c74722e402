/**
 * Turns the raw outcome of a sliding-log check (shared by the Redis and in-process
 * limiters) into the RateDecision the API maps to RateLimit-* and Retry-After headers.
 */
import type { RateDecision } from './types.js';

export const RATE_WINDOW_MS = 60_000;

/**
 * @param count calls in the window after this one (admitted) or as found (refused)
 * @param untilRoomMs ms until the oldest call that blocks (or, when admitted, the oldest
 *   call in the window) leaves it: the moment `remaining` goes up again.
 */
export function toRateDecision(allowed: boolean, limit: number, count: number, untilRoomMs: number): RateDecision {
  // Whole seconds, never 0: a client told "0" would retry in a tight loop.
  const resetSeconds = Math.max(1, Math.ceil(untilRoomMs / 1000));
  const decision: RateDecision = { allowed, limit, remaining: Math.max(0, limit - count), resetSeconds };
  if (!allowed) decision.retryAfterSeconds = resetSeconds;
  return decision;
}

/** A limit below 1 refuses every call; the reset is then a full window. */
export function refuseAll(limit: number): RateDecision {
  return toRateDecision(false, Math.max(0, limit), 0, RATE_WINDOW_MS);
}
