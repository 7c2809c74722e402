/**
 * Throttling of password checks per account and per client address, kept in PostgreSQL so
 * every replica sees the same counts. Every endpoint that checks a password (sign-in, the
 * current password of /me/password, accepting an invitation with a password) goes through
 * `check()`, and the account and address buckets are shared between them.
 *
 * An attempt first reserves its slot: in one transaction holding both rows' locks it is
 * refused when either subject is locked, or else counted as a failure on both (and the lock
 * the new count calls for is set) before the password is looked at. So a parallel burst
 * cannot get more attempts through than the policy allows: the attempt that reaches the
 * limit sets the lock every later one meets. A right password then clears the account's
 * failures and gives the address its attempt back; a check that never ran (the hashing
 * queue was full, or it failed) gives both back.
 *
 * Failures within a window first slow attempts down (a short, doubling lock after
 * `slowAfter` failures) and then lock them for `lockSeconds`. The same happens whether or
 * not the account exists, so the answer never tells which e-mails are registered.
 * Addresses are counted per IPv4 address and per IPv6 /64 (one host usually holds a whole
 * /64); an IPv4-mapped IPv6 address counts as its IPv4 address.
 */
import ipaddr from 'ipaddr.js';
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

/** Who an attempt counts against: `accountSubject(email)` and `addressSubject(ip)`. */
export interface AttemptSubjects {
  account: string;
  address: string;
}

export const DEFAULT_THROTTLE: ThrottlePolicies = {
  account: { slowAfter: 5, lockAfter: 10, lockSeconds: 15 * 60, windowSeconds: 15 * 60 },
  address: { slowAfter: 20, lockAfter: 50, lockSeconds: 15 * 60, windowSeconds: 15 * 60 },
};

/** Longest wait of the slowing phase, before the real lock. */
const MAX_SLOW_SECONDS = 60;

/** An attempt refused before its password was looked at (answered 429 LOGIN_THROTTLED with Retry-After). */
export class AttemptThrottled extends Error {
  override readonly name = 'AttemptThrottled';
  constructor(readonly retryAfterSeconds: number) {
    super(`too many failed password checks; try again in ${retryAfterSeconds} s`);
  }
}

export function accountSubject(email: string): string {
  return `account:${email.trim().toLowerCase()}`;
}

/** `address:<IPv4>` or `address:<IPv6 /64 prefix>/64`; an IPv4-mapped IPv6 address is its IPv4 address. */
export function addressSubject(ip: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip);
  } catch {
    return `address:${ip}`;
  }
  if (parsed.kind() === 'ipv4') return `address:${parsed.toString()}`;
  const parts = (parsed as ipaddr.IPv6).parts;
  return `address:${new ipaddr.IPv6([...parts.slice(0, 4), 0, 0, 0, 0]).toString()}/64`;
}

/** Seconds the `failures`-th failure locks its subject for (0: none). */
function lockSecondsFor(p: ThrottlePolicy, failures: number): number {
  if (failures >= p.lockAfter) return p.lockSeconds;
  if (failures >= p.slowAfter) return Math.min(2 ** (failures - p.slowAfter), MAX_SLOW_SECONDS);
  return 0;
}

type Kind = keyof ThrottlePolicies;

export class LoginThrottle {
  constructor(
    private readonly db: Knex,
    private readonly policies: ThrottlePolicies = DEFAULT_THROTTLE,
  ) {}

  /**
   * Runs one password check under the throttle: reserve, check, settle. The check answers
   * what it authenticated (the user), or null for a wrong password or an unknown account.
   * Throws AttemptThrottled (without running the check) when a subject is locked; a check
   * that throws gives its attempt back and rethrows.
   */
  async check<T>(subjects: AttemptSubjects, passwordCheck: () => Promise<T | null>): Promise<T | null> {
    await this.reserve(subjects);
    let found: T | null;
    try {
      found = await passwordCheck();
    } catch (err) {
      await this.giveBack(subjects);
      throw err;
    }
    if (found !== null) await this.succeeded(subjects);
    return found;
  }

  /** Counts an attempt as a failure on both subjects, or throws AttemptThrottled when either is locked (then nothing is counted). */
  async reserve(subjects: AttemptSubjects): Promise<void> {
    // One order for every caller, so two attempts never wait on each other's rows crosswise.
    const entries = (['account', 'address'] as const)
      .map((kind) => ({ kind, subject: subjects[kind] }))
      .sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
    const wait = await this.db.transaction(async (trx) => {
      for (const e of entries) {
        await trx.raw(`insert into login_throttle (subject, failures, window_started_at) values (?, 0, now()) on conflict (subject) do nothing`, [e.subject]);
      }
      const { rows } = await trx.raw<{ rows: Array<{ subject: string; failures: number; age: string | number; wait: string | number }> }>(
        `select subject, failures,
                extract(epoch from (now() - window_started_at)) as age,
                greatest(0, coalesce(extract(epoch from (locked_until - now())), 0)) as wait
           from login_throttle where subject = any(?) order by subject for update`,
        [entries.map((e) => e.subject)],
      );
      const longest = Math.max(0, ...rows.map((r) => Number(r.wait)));
      if (longest > 0) return Math.ceil(longest);
      for (const e of entries) {
        const row = rows.find((r) => r.subject === e.subject);
        const p = this.policies[e.kind];
        const newWindow = !row || Number(row.age) > p.windowSeconds;
        const failures = newWindow ? 1 : Number(row.failures) + 1;
        const lock = lockSecondsFor(p, failures);
        await trx('login_throttle')
          .where({ subject: e.subject })
          .update({
            failures,
            ...(newWindow ? { window_started_at: trx.fn.now() } : {}),
            locked_until: lock > 0 ? trx.raw('now() + make_interval(secs => ?)', [lock]) : null,
          });
      }
      return 0;
    });
    if (wait > 0) throw new AttemptThrottled(wait);
    await this.forgetStale();
  }

  /** The password was right: the account's failures are forgotten (not the address's: one good password must not unlock a spraying client), and the address gets this attempt back. */
  async succeeded(subjects: AttemptSubjects): Promise<void> {
    await this.db('login_throttle').where({ subject: subjects.account }).delete();
    await this.uncount(subjects.address, 'address');
  }

  /** The check never ran (or failed): the attempt is given back on both subjects. */
  async giveBack(subjects: AttemptSubjects): Promise<void> {
    await this.uncount(subjects.account, 'account');
    await this.uncount(subjects.address, 'address');
  }

  /** One attempt fewer; a count back below the slowing threshold locks nothing. */
  private async uncount(subject: string, kind: Kind): Promise<void> {
    await this.db.raw(
      `update login_throttle set failures = greatest(failures - 1, 0),
              locked_until = case when greatest(failures - 1, 0) < ? then null else locked_until end
        where subject = ?`,
      [this.policies[kind].slowAfter, subject],
    );
  }

  /**
   * Rows of long-past windows that lock nothing are forgotten (bounded by a day of attempts).
   * Rows an attempt holds are skipped, not waited for: waiting could close a deadlock with an
   * attempt that holds one of them and waits for another.
   */
  private async forgetStale(): Promise<void> {
    await this.db.raw(
      `delete from login_throttle where subject in (
         select subject from login_throttle
          where window_started_at < now() - interval '1 day' and (locked_until is null or locked_until < now())
          for update skip locked)`,
    );
  }
}
