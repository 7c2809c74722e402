/**
 * The rate limit, the first of the contract's limits after authentication
 * (rate limit → monthly quota → call balance). src/limits implements it on Redis, or in
 * this process in embedded mode. Quota and balance are charged by the request repository,
 * in the same statement that writes the request (src/store/migrations/0500_admission.ts).
 */
import type { KeyLimits } from '../recognition/types.js';

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

/** A key's limits: part of the authenticated caller, defined in src/recognition/types.ts. */
export type { KeyLimits };

export interface Limits {
  /** One call against the key's rolling 60 s window for that bucket. */
  checkRate(key: KeyLimits, bucket: RateBucket): Promise<RateDecision>;
  /**
   * Health of the limiter store (Redis, when used). `ok` stays true while Redis is down:
   * the limiter still serves then (degraded: per-process rate limit).
   */
  ready(): Promise<{ ok: boolean; detail?: string; degraded?: boolean }>;
  close(): Promise<void>;
}
