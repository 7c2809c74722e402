/**
 * createLimits: the admission limits of the contract (rate limit → monthly quota → call
 * balance) behind the Limits port.
 *
 * - With Redis: the rate limit is a sliding log in one Lua script per check (shared by
 *   every replica); the quota keeps a fast counter in Redis that refuses exhausted keys
 *   without touching PostgreSQL, while every admission is committed by PostgreSQL's
 *   conditional upsert (the source of truth, exact by itself).
 * - Without Redis (embedded mode), or while Redis is unreachable: the same sliding log in
 *   this process, and the quota on PostgreSQL alone. Calls never fail because of Redis.
 * - The balance is always one conditional UPDATE in PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import { BalanceStore } from './balance-store.js';
import { InProcessRateLimiter } from './in-process-rate-limiter.js';
import { msUntilNextUtcMonth, utcMonth } from './month.js';
import { QuotaStore } from './quota-store.js';
import { RATE_WINDOW_MS, refuseAll, toRateDecision } from './rate-decision.js';
import { RedisLink, type LimitsLogger } from './redis-link.js';
import type { KeyLimits, Limits, QuotaDecision, RateBucket, RateDecision } from './types.js';

export type { KeyLimits, Limits, QuotaDecision, RateBucket, RateDecision } from './types.js';
export type { LimitsLogger } from './redis-link.js';
export { readMonthlyUsage } from './quota-store.js';
export { utcMonth } from './month.js';

/** 'redis': shared limits; 'degraded': Redis unreachable, per-process fallback; 'embedded': no Redis configured. */
export type LimiterMode = 'redis' | 'degraded' | 'embedded';

export interface CreateLimitsOptions {
  config: Pick<Config, 'rateLimitPerMinute' | 'lookupRateLimitPerMinute'> & { redisUrl?: string };
  knex: Knex;
  /** Defaults to config.redisUrl; neither set → embedded mode. */
  redisUrl?: string;
  logger?: LimitsLogger;
  /**
   * Milliseconds since the epoch. Drives the quota month and the rate windows; when
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
  /** Lifetime of the Redis quota counter before it is rebuilt from PostgreSQL. */
  quotaCounterTtlMs?: number;
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

function checkUnits(units: number): void {
  if (!Number.isSafeInteger(units) || units < 0) throw new RangeError(`units must be a non-negative integer (got ${units})`);
}

export async function createLimits(opts: CreateLimitsOptions): Promise<LimitsService> {
  const limits = new AdmissionLimits(opts);
  await limits.start();
  return limits;
}

class AdmissionLimits implements LimitsService {
  private readonly clock: () => number;
  private readonly clockInjected: boolean;
  private readonly prefix: string;
  private readonly local: InProcessRateLimiter;
  private readonly quota: QuotaStore;
  private readonly balance: BalanceStore;
  private readonly link?: RedisLink;
  private readonly listeners = new Set<(degraded: boolean) => void>();
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private memberSeq = 0;
  private readonly counterTtlMs: number;

  constructor(private readonly opts: CreateLimitsOptions) {
    this.clock = opts.clock ?? Date.now;
    this.clockInjected = opts.clock !== undefined;
    this.local = new InProcessRateLimiter(RATE_WINDOW_MS, this.clock);
    this.prefix = opts.keyPrefix ?? 'recog:limits:';
    this.quota = new QuotaStore(opts.knex);
    this.balance = new BalanceStore(opts.knex);
    this.counterTtlMs = opts.quotaCounterTtlMs ?? 60_000;
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

  async reserveQuota(key: KeyLimits, units: number): Promise<QuotaDecision> {
    checkUnits(units);
    const limit = key.monthlyQuota;
    const now = this.clock();
    const month = utcMonth(now);
    if (units === 0) return { allowed: true, limit, used: await this.quota.used(key.keyId, month), period: month };

    const counter = `${this.prefix}quota:${key.keyId}:${month}`;
    const fast = this.link === undefined ? undefined : await this.takeFromCounter(counter, key.keyId, month, units, limit, now);
    // The counter refuses exhausted keys without a PostgreSQL write, but it may run ahead of
    // PostgreSQL (a give-back that could not reach Redis): a refusal is confirmed with a read of
    // the truth, and a stale counter is dropped so the reservation below decides exactly.
    if (fast !== undefined && !fast.allowed) {
      const used = await this.quota.used(key.keyId, month);
      if (used + units > limit) return { allowed: false, limit, used, period: month };
      await this.link?.attempt((r) => r.del(counter));
    }

    let committed;
    try {
      committed = await this.quota.reserve(key.keyId, month, units, limit);
    } catch (err) {
      if (fast?.allowed) await this.link?.attempt((r) => r.limiterQuotaGive(counter, units));
      throw err;
    }
    if (!committed.allowed && fast?.allowed) {
      // The counter was behind PostgreSQL (e.g. admissions while Redis was away): drop it
      // so the next call rebuilds it from the truth.
      await this.link?.attempt((r) => r.del(counter));
    }
    return { allowed: committed.allowed, limit, used: committed.used, period: month };
  }

  /**
   * Counts the units on the Redis counter, rebuilding it from PostgreSQL when Redis has
   * lost it. undefined: Redis unusable, PostgreSQL decides alone.
   */
  private async takeFromCounter(
    counter: string,
    keyId: string,
    month: string,
    units: number,
    limit: number,
    now: number,
  ): Promise<{ allowed: boolean; used: number } | undefined> {
    const link = this.link!;
    let reply = await link.attempt((r) => r.limiterQuotaTake(counter, units, limit));
    if (reply !== undefined && reply[0] === -1) {
      const used = await this.quota.used(keyId, month);
      // Never outlive the month, and expire soon so any drift heals from PostgreSQL.
      const ttl = Math.max(1, Math.min(this.counterTtlMs, msUntilNextUtcMonth(now) + 60_000));
      await link.attempt((r) => r.set(counter, used, 'PX', ttl, 'NX'));
      reply = await link.attempt((r) => r.limiterQuotaTake(counter, units, limit));
    }
    if (reply === undefined || reply[0] === -1) return undefined;
    return { allowed: reply[0] === 1, used: reply[1] };
  }

  async releaseQuota(key: KeyLimits, units: number, period?: string): Promise<void> {
    checkUnits(units);
    if (period !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(period)) throw new RangeError(`period must be 'YYYY-MM' (got ${period})`);
    if (units === 0) return;
    const month = period ?? utcMonth(this.clock());
    await this.quota.release(key.keyId, month, units);
    await this.link?.attempt((r) => r.limiterQuotaGive(`${this.prefix}quota:${key.keyId}:${month}`, units));
  }

  async debitBalance(orgId: string, units: number): Promise<boolean> {
    checkUnits(units);
    return this.balance.debit(orgId, units);
  }

  async refundBalance(orgId: string, units: number): Promise<void> {
    checkUnits(units);
    await this.balance.refund(orgId, units);
  }

  /**
   * Always ok: with Redis down the limiter still serves (per-process rate limit, quota on
   * PostgreSQL), so it must not take the replica out of the load balancer. `degraded`
   * and `detail` say what is happening.
   */
  async ready(): Promise<{ ok: boolean; detail?: string; degraded?: boolean }> {
    if (this.link === undefined) return { ok: true, detail: 'embedded: in-process rate limiter', degraded: false };
    if (this.link.usable() && (await this.link.ping())) return { ok: true, detail: 'redis', degraded: false };
    return { ok: true, detail: 'degraded: Redis unreachable; per-process rate limits, quota on PostgreSQL alone', degraded: true };
  }

  async close(): Promise<void> {
    this.local.close();
    await this.link?.close();
  }
}
