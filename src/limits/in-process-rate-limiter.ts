/**
 * Sliding-log rate limiter held in this process's memory: embedded mode (no Redis) and
 * the fallback while Redis is unreachable. Same semantics as the Redis script
 * (redis-rate-limiter.ts): a call is admitted when fewer than `limit` admitted calls lie
 * in the last 60 s; refused calls are not recorded.
 */
import { RATE_WINDOW_MS, refuseAll, toRateDecision } from './rate-decision.js';
import type { RateDecision } from './types.js';

export class InProcessRateLimiter {
  /** Admitted call times per window id, oldest first. */
  private readonly logs = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly windowMs = RATE_WINDOW_MS,
    clock: () => number = Date.now,
  ) {
    // Forget idle keys so memory follows the active keys, not every key ever seen.
    this.sweeper = setInterval(() => this.sweep(clock()), windowMs);
    this.sweeper.unref();
  }

  hit(id: string, limit: number, now: number): RateDecision {
    if (limit < 1) return refuseAll(limit);
    let log = this.logs.get(id);
    if (log === undefined) {
      log = [];
      this.logs.set(id, log);
    }
    // A call made at t counts for t <= now < t + window (the Redis script uses the same bound).
    let expired = 0;
    while (expired < log.length && log[expired] <= now - this.windowMs) expired++;
    if (expired > 0) log.splice(0, expired);

    if (log.length < limit) {
      log.push(now);
      return toRateDecision(true, limit, log.length, log[0] + this.windowMs - now);
    }
    // The limit may have been lowered below what the log holds: room comes back when
    // enough of the oldest calls have left for the count to drop under the limit.
    const blocker = log[log.length - limit];
    return toRateDecision(false, limit, log.length, blocker + this.windowMs - now);
  }

  /** Drops logs whose newest call has left the window. */
  sweep(now: number): void {
    for (const [id, log] of this.logs) {
      if (log.length === 0 || log[log.length - 1] <= now - this.windowMs) this.logs.delete(id);
    }
  }

  get size(): number {
    return this.logs.size;
  }

  close(): void {
    clearInterval(this.sweeper);
    this.logs.clear();
  }
}
