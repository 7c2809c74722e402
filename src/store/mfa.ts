/**
 * Second factor storage: a user's TOTP secret (pending until confirmed), the step of the
 * last code accepted (so a code is never accepted twice), single-use recovery codes kept as
 * SHA-256 digests, sign-in challenges between the password and the code, when a session last
 * passed a second-factor check, and the organisations that require a second factor.
 * Codes are checked by the caller (src/console/totp.ts); the guarded updates here make an
 * acceptance or a spend happen at most once even under concurrent requests.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { isUuid } from './db.js';

export const MFA_TOKEN_PREFIX = 'rcm_';
/** How long a sign-in challenge (the password was right, the code is still to come) lives. */
export const MFA_CHALLENGE_SECONDS = 5 * 60;

export interface TotpRow {
  user_id: string;
  secret: string;
  confirmed_at: Date | null;
  last_step: number | null;
}

const digest = (plain: string): string => createHash('sha256').update(plain, 'utf8').digest('hex');

export async function getTotp(db: Knex, userId: string): Promise<TotpRow | null> {
  const row = await db('user_totp').where({ user_id: userId }).first<(Omit<TotpRow, 'last_step'> & { last_step: string | number | null }) | undefined>();
  return row ? { ...row, last_step: row.last_step === null ? null : Number(row.last_step) } : null;
}

/** True when the user has an active (confirmed) TOTP. */
export async function hasTotp(db: Knex, userId: string): Promise<boolean> {
  const row = await db('user_totp').where({ user_id: userId }).whereNotNull('confirmed_at').first<{ user_id: string } | undefined>('user_id');
  return row !== undefined;
}

/** Starts (or restarts) enrollment with a new secret; refused (false) when TOTP is already active. */
export async function startEnrollment(db: Knex, userId: string, secret: string): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    `insert into user_totp (user_id, secret) values (?, ?)
       on conflict (user_id) do update set secret = excluded.secret, created_at = now(), last_step = null
       where user_totp.confirmed_at is null
     returning user_id`,
    [userId, secret],
  );
  return rows.length === 1;
}

/** Activates a pending enrollment whose code matched `step`, with fresh recovery codes. False when nothing was pending. */
export async function confirmEnrollment(trx: Knex.Transaction, userId: string, step: number, recoveryCodes: string[]): Promise<boolean> {
  const n = await trx('user_totp').where({ user_id: userId }).whereNull('confirmed_at').update({ confirmed_at: trx.fn.now(), last_step: step });
  if (n !== 1) return false;
  await trx('user_recovery_codes').where({ user_id: userId }).delete();
  await trx('user_recovery_codes').insert(recoveryCodes.map((c) => ({ user_id: userId, code_hash: digest(c) })));
  return true;
}

/** Removes the user's TOTP and recovery codes. */
export async function removeTotp(trx: Knex.Transaction, userId: string): Promise<boolean> {
  await trx('user_recovery_codes').where({ user_id: userId }).delete();
  return (await trx('user_totp').where({ user_id: userId }).delete()) === 1;
}

/** Records `step` as accepted, only if it is after the last one: false when the code was already used (a replay, or a concurrent use). */
export async function acceptStep(db: Knex, userId: string, step: number): Promise<boolean> {
  const n = await db('user_totp')
    .where({ user_id: userId })
    .whereNotNull('confirmed_at')
    .where((q) => q.whereNull('last_step').orWhere('last_step', '<', step))
    .update({ last_step: step });
  return n === 1;
}

/** Spends one recovery code (normalised form); false when it is not one of the user's or was used. */
export async function spendRecoveryCode(db: Knex, userId: string, normalized: string): Promise<boolean> {
  const n = await db('user_recovery_codes').where({ user_id: userId, code_hash: digest(normalized) }).whereNull('used_at').update({ used_at: db.fn.now() });
  return n === 1;
}

export async function recoveryCodesLeft(db: Knex, userId: string): Promise<number> {
  const row = await db('user_recovery_codes').where({ user_id: userId }).whereNull('used_at').count<{ n: string }>('* as n').first();
  return Number(row?.n ?? 0);
}

/** A sign-in challenge for a user whose password was right: the plain token (returned once; stored as a digest). */
export async function createChallenge(db: Knex, userId: string, userAgent?: string): Promise<string> {
  const plain = MFA_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  // Housekeeping: the user's ended challenges go.
  await db('mfa_challenges').where({ user_id: userId }).where((q) => q.where('expires_at', '<', db.fn.now()).orWhereNotNull('used_at')).delete();
  await db('mfa_challenges').insert({
    token_hash: digest(plain),
    user_id: userId,
    expires_at: db.raw('now() + make_interval(secs => ?)', [MFA_CHALLENGE_SECONDS]),
    user_agent: userAgent?.slice(0, 300) ?? null,
  });
  return plain;
}

/**
 * The user of a live challenge (not expired, not spent, and not older than the user's latest
 * password change), or null.
 */
export async function challengeUser(db: Knex, plain: string): Promise<string | null> {
  if (!plain.startsWith(MFA_TOKEN_PREFIX) || plain.length > 128) return null;
  const row = await db('mfa_challenges as c')
    .join('users as u', 'u.id', 'c.user_id')
    .where({ 'c.token_hash': digest(plain) })
    .whereNull('c.used_at')
    .where('c.expires_at', '>', db.fn.now())
    .whereRaw('(u.password_changed_at is null or c.created_at >= u.password_changed_at)')
    .first<{ user_id: string } | undefined>('c.user_id');
  return row?.user_id ?? null;
}

/** Spends a challenge (single use); false when it was spent meanwhile. */
export async function spendChallenge(trx: Knex, plain: string): Promise<boolean> {
  return (await trx('mfa_challenges').where({ token_hash: digest(plain) }).whereNull('used_at').update({ used_at: trx.fn.now() })) === 1;
}

/** The session passed a second-factor check now. */
export async function markSessionVerified(db: Knex, sessionId: string): Promise<void> {
  await db('console_sessions').where({ id: sessionId }).update({ mfa_verified_at: db.fn.now() });
}

/** True when the session passed a second-factor check within `seconds`. */
export async function sessionVerifiedWithin(db: Knex, sessionId: string, seconds: number): Promise<boolean> {
  const row = await db('console_sessions')
    .where({ id: sessionId })
    .where('mfa_verified_at', '>', db.raw('now() - make_interval(secs => ?)', [seconds]))
    .first<{ id: string } | undefined>('id');
  return row !== undefined;
}

export async function orgRequiresMfa(db: Knex, orgId: string): Promise<boolean> {
  const row = await db('organizations').where({ id: orgId }).first<{ mfa_required: boolean } | undefined>('mfa_required');
  return row?.mfa_required === true;
}

/** Sets the organisation's requirement; answers the previous value. */
export async function setOrgMfaRequired(trx: Knex, orgId: string, required: boolean): Promise<boolean> {
  const before = await trx('organizations').where({ id: orgId }).forUpdate().first<{ mfa_required: boolean } | undefined>('mfa_required');
  await trx('organizations').where({ id: orgId }).update({ mfa_required: required });
  return before?.mfa_required === true;
}

/**
 * True when `userId` is a member of the organisation `ref` (name or id), the organisation
 * requires a second factor and the user has no active TOTP.
 */
export async function mfaBlocksMember(db: Knex, userId: string, ref: string): Promise<boolean> {
  const row = await db('organizations as o')
    .join('memberships as m', function on() {
      this.on('m.org_id', '=', 'o.id').andOn('m.user_id', '=', db.raw('?', [userId]));
    })
    .where(isUuid(ref) ? { 'o.id': ref } : { 'o.name': ref })
    .where('o.mfa_required', true)
    .whereNotExists(db('user_totp as t').where('t.user_id', userId).whereNotNull('t.confirmed_at').select(db.raw('1')))
    .first<{ id: string } | undefined>('o.id');
  return row !== undefined;
}
