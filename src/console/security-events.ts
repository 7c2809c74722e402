/**
 * An account's security events as audit entries (its security log, no organisation): the
 * verbs the sign-in, password and invitation routes share. Events that change nothing (a
 * failed or throttled password check) are plain inserts; the ones that go with a change are
 * built here and written by `audited` in the change's transaction.
 */
import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { writeAudit, type AuditEntry } from '../store/audit.js';
import { findUserByEmail } from '../store/users.js';
import { AttemptThrottled } from './throttle.js';

/** `userId` null: an e-mail without an account (only operators see those: `recog audit list`). */
export function securityEntry(
  request: FastifyRequest,
  userId: string | null,
  actor: AuditEntry['actor'],
  action: AuditEntry['action'],
  target: AuditEntry['target'],
  details?: Record<string, unknown>,
): AuditEntry {
  return { userId, actor, action, target, details, ip: request.ip };
}

/**
 * Runs a throttled password check; an attempt the throttle refuses is audited
 * (`session.login_throttled`, for the account with that e-mail if there is one), then
 * rethrown, so the answer stays the 429 it was.
 */
export async function throttleAudited<T>(db: Knex, request: FastifyRequest, email: string, endpoint: string, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (err instanceof AttemptThrottled) {
      const account = await findUserByEmail(db, email);
      await writeAudit(
        db,
        securityEntry(request, account?.id ?? null, { id: null, email }, 'session.login_throttled', { type: 'user', id: account?.id ?? email, name: email }, {
          endpoint,
          retry_after_seconds: err.retryAfterSeconds,
        }),
      );
    }
    throw err;
  }
}

/** A wrong password (or none that counts any more) for `email`: `session.login_failed`. */
export async function auditFailedSignIn(db: Knex, request: FastifyRequest, email: string, account: { id: string } | null, endpoint: string, reason: string): Promise<void> {
  await writeAudit(
    db,
    securityEntry(request, account?.id ?? null, { id: null, email }, 'session.login_failed', { type: 'user', id: account?.id ?? email, name: email }, {
      endpoint,
      reason,
      account_exists: account !== null,
    }),
  );
}
