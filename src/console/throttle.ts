/**
 * Sign-in throttling per account and per client address, kept in PostgreSQL so every
 * replica sees the same counts. Failures within a window first slow sign-in down (a
 * short, doubling lock after `slowAfter` failures) and then lock it for `lockSeconds`.
 * The check runs before the password is looked at, and the same way whether or not the
 * account exists, so the answer never tells which e-mails are registered.
 */
import type { Knex } from 'knex';

export interface ThrottlePolicy {
  slowAfter: number;
  lockAfter: number;
  lockSeconds: number;
  windowSeconds: number;
}

export interface ThrottlePolicies {
  account: ThrottlePolicy;
  address: ThrottlePolicy;
}

export const DEFAULT_THROTTLE: ThrottlePolicies = {
  account: { slowAfter: 5, lockAfter: 10, lockSeconds: 15 * 60, windowSeconds: 15 * 60 },
  address: { slowAfter: 20, lockAfter: 50, lockSeconds: 15 * 60, windowSeconds: 15 * 60 },
};

/** Longest wait of the slowing phase, before the real lock. */
const MAX_SLOW_SECONDS = 60;

export function accountSubject(email: string): string {
  return `account:${email.trim().toLowerCase()}`;
}

export function addressSubject(ip: string): string {
  return `address:${ip}`;
}

export class LoginThrottle {
  constructor(
    private readonly db: Knex,
    private readonly policies: ThrottlePolicies = DEFAULT_THROTTLE,
  ) {}

  /** Seconds to wait when any subject is locked, else 0. */
  async retryAfter(subjects: string[]): Promise<number> {
    const rows = await this.db('login_throttle')
      .whereIn('subject', subjects)
      .where('locked_until', '>', this.db.fn.now())
      .select<Array<{ wait: string | number }>>(this.db.raw('extract(epoch from (locked_until - now())) as wait'));
    const wait = Math.max(0, ...rows.map((r) => Number(r.wait)));
    return wait > 0 ? Math.ceil(wait) : 0;
  }

  async recordFailure(subject: string, kind: keyof ThrottlePolicies): Promise<void> {
    const p = this.policies[kind];
    const { rows } = await this.db.raw<{ rows: Array<{ failures: number }> }>(
      `insert into login_throttle as t (subject, failures, window_started_at) values (?, 1, now())
       on conflict (subject) do update set
         failures = case when t.window_started_at < now() - make_interval(secs => ?) then 1 else t.failures + 1 end,
         window_started_at = case when t.window_started_at < now() - make_interval(secs => ?) then now() else t.window_started_at end
       returning failures`,
      [subject, p.windowSeconds, p.windowSeconds],
    );
    const failures = Number(rows[0].failures);
    // Rows of long-past windows that lock nothing are forgotten (bounded by a day of failures).
    await this.db('login_throttle')
      .where('window_started_at', '<', this.db.raw(`now() - interval '1 day'`))
      .where((q) => q.whereNull('locked_until').orWhere('locked_until', '<', this.db.fn.now()))
      .delete();
    let lockSeconds = 0;
    if (failures >= p.lockAfter) lockSeconds = p.lockSeconds;
    else if (failures >= p.slowAfter) lockSeconds = Math.min(2 ** (failures - p.slowAfter), MAX_SLOW_SECONDS);
    if (lockSeconds > 0) {
      await this.db('login_throttle').where({ subject }).update({ locked_until: this.db.raw('now() + make_interval(secs => ?)', [lockSeconds]) });
    }
  }

  /** A successful sign-in clears the account's failures (not the address's: one good password must not unlock a spraying client). */
  async clear(subject: string): Promise<void> {
    await this.db('login_throttle').where({ subject }).delete();
  }
}
