/**
 * createLimits: the contract's rate limit behind the Limits port.
 *
 * - With Redis: a sliding log in one Lua script per check, shared by every replica.
 * - Without Redis (embedded mode), or while Redis is unreachable: the same sliding log in
 *   this process. Calls never fail because of Redis.
 *
 * The monthly quota and the call balance live in PostgreSQL alone and are charged in the
 * statement that writes the request (src/store/migrations/0500_admission.ts), exact across
 * replicas without Redis.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { InProcessRateLimiter } from './in-process-rate-limiter.js';
import { RATE_WINDOW_MS, refuseAll, toRateDecision } from './rate-decision.js';
import { RedisLink, type LimitsLogger } from './redis-link.js';
import type { KeyLimits, Limits, RateBucket, RateDecision } from './types.js';

export type { KeyLimits, Limits, RateBucket, RateDecision } from './types.js';
export type { LimitsLogger } from './redis-link.js';
export { utcMonth } from '../recognition/month.js';

/** 'redis': shared limits; 'degraded': Redis unreachable, per-process fallback; 'embedded': no Redis configured. */
export type LimiterMode = 'redis' | 'degraded' | 'embedded';

export interface CreateLimitsOptions {
  config: Pick<Config, 'rateLimitPerMinute' | 'lookupRateLimitPerMinute'> & { redisUrl?: string };
  /** Defaults to config.redisUrl; neither set → embedded mode. */
  redisUrl?: string;
  logger?: LimitsLogger;
  /**
   * Milliseconds since the epoch. Drives the rate windows; when
   * injected (tests), it is also passed to the Redis script instead of Redis's clock.
   */
  clock?: () => number;
  /** Prefix of every Redis key (tests use a unique one). */
  keyPrefix?: string;
  /** Called when the limiter enters (true) or leaves (false) the degraded state. */
  onDegraded?: (degraded: boolean, reason?: string) => void;
  redisCommandTimeoutMs?: number;
  /** After a Redis failure, calls skip Redis for this long before trying again. */
  redisCoolOffMs?: number;
  /** How long start-up waits for Redis before starting degraded. */
  redisConnectWaitMs?: number;
}

export interface LimitsService extends Limits {
  mode(): LimiterMode;
  /** Subscribes to degraded/recovered changes (e.g. a gauge); returns the unsubscribe function. */
  onDegradedChange(listener: (degraded: boolean) => void): () => void;
}

const stderrLogger: LimitsLogger = {
  warn: (obj, msg) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...obj })}\n`),
  info: () => {},
};

export async function createLimits(opts: CreateLimitsOptions): Promise<LimitsService> {
  const limits = new RateLimits(opts);
  await limits.start();
  return limits;
}

class RateLimits implements LimitsService {
  private readonly clock: () => number;
  private readonly clockInjected: boolean;
  private readonly prefix: string;
  private readonly local: InProcessRateLimiter;
  private readonly link?: RedisLink;
  private readonly listeners = new Set<(degraded: boolean) => void>();
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private memberSeq = 0;

  constructor(private readonly opts: CreateLimitsOptions) {
    this.clock = opts.clock ?? Date.now;
    this.clockInjected = opts.clock !== undefined;
    this.local = new InProcessRateLimiter(RATE_WINDOW_MS, this.clock);
    this.prefix = opts.keyPrefix ?? 'recog:limits:';
    const url = opts.redisUrl ?? opts.config.redisUrl;
    if (url !== undefined) {
      this.link = new RedisLink({
        url,
        logger: opts.logger ?? stderrLogger,
        commandTimeoutMs: opts.redisCommandTimeoutMs,
        coolOffMs: opts.redisCoolOffMs,
        connectWaitMs: opts.redisConnectWaitMs,
        onChange: (degraded, reason) => {
          opts.onDegraded?.(degraded, reason);
          for (const l of this.listeners) l(degraded);
        },
      });
    }
  }

  async start(): Promise<void> {
    await this.link?.waitReady();
  }

  mode(): LimiterMode {
    if (this.link === undefined) return 'embedded';
    return this.link.isDegraded ? 'degraded' : 'redis';
  }

  onDegradedChange(listener: (degraded: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async checkRate(key: KeyLimits, bucket: RateBucket): Promise<RateDecision> {
    const limit =
      bucket === 'recognition' ? key.rateLimitPerMinute ?? this.opts.config.rateLimitPerMinute : this.opts.config.lookupRateLimitPerMinute;
    if (limit < 1) return refuseAll(limit);
    const id = `${this.prefix}rate:${bucket}:${key.keyId}`;
    const now = this.clock();
    if (this.link !== undefined) {
      const member = `${this.memberPrefix}:${(this.memberSeq++).toString(36)}`;
      const reply = await this.link.attempt((r) =>
        r.limiterSlidingLog(id, limit, RATE_WINDOW_MS, member, this.clockInjected ? now : ''),
      );
      if (reply !== undefined) return toRateDecision(reply[0] === 1, limit, reply[1], reply[2]);
    }
    return this.local.hit(id, limit, now);
  }

  /**
   * Always ok: with Redis down the limiter still serves (per-process rate limit), so it must not take the replica out of the load balancer. `degraded`
   * and `detail` say what is happening.
   */
  async ready(): Promise<{ ok: boolean; detail?: string; degraded?: boolean }> {
    if (this.link === undefined) return { ok: true, detail: 'embedded: in-process rate limiter', degraded: false };
    if (this.link.usable() && (await this.link.ping())) return { ok: true, detail: 'redis', degraded: false };
    return { ok: true, detail: 'degraded: Redis unreachable; per-process rate limits', degraded: true };
  }

  async close(): Promise<void> {
    this.local.close();
    await this.link?.close();
  }
}
