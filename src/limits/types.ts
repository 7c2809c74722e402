/**
 * Admission limits, in the contract's order after authentication:
 * rate limit → monthly quota → call balance. The API calls these; src/limits implements
 * them on Redis + PostgreSQL, or in-process in embedded mode.
 */

export type RateBucket = 'recognition' | 'lookup';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window has room again (RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds to wait before retrying; set when refused (Retry-After). */
  retryAfterSeconds?: number;
}

export interface QuotaDecision {
  allowed: boolean;
  limit: number;
  /** Usage after this reservation (or the current usage when refused). */
  used: number;
  /** The UTC month ('YYYY-MM') the units were counted in; pass it to releaseQuota. */
  period?: string;
}

export interface KeyLimits {
  keyId: string;
  orgId: string;
  /** Per-key override; null = the configured default. */
  rateLimitPerMinute: number | null;
  monthlyQuota: number;
}

export interface Limits {
  /** One call against the key's rolling 60 s window for that bucket. */
  checkRate(key: KeyLimits, bucket: RateBucket): Promise<RateDecision>;
  /** Reserves `units` of this month's quota atomically; exactly the remaining count is admitted under concurrency. */
  reserveQuota(key: KeyLimits, units: number): Promise<QuotaDecision>;
  /**
   * Gives back units reserved for work that never ran (e.g. an image that failed before
   * processing). `period` (from the QuotaDecision) keeps a release right across a month
   * boundary; without it the current month is used.
   */
  releaseQuota(key: KeyLimits, units: number, period?: string): Promise<void>;
  /** Debits the organisation's call balance; false when short (balance never below zero). Unlimited when the org has none. */
  debitBalance(orgId: string, units: number): Promise<boolean>;
  refundBalance(orgId: string, units: number): Promise<void>;
  /**
   * Health of the limiter store (Redis, when used). `ok` stays true while Redis is down:
   * the limiter still serves then (degraded: per-process rate limit, quota on PostgreSQL).
   */
  ready(): Promise<{ ok: boolean; detail?: string; degraded?: boolean }>;
  close(): Promise<void>;
}
