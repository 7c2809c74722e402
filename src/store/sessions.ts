/**
 * Console sessions: opaque random tokens stored as SHA-256 digests. A session is the
 * family of one sign-in; its refresh token rotates on every use, and presenting a spent
 * refresh token revokes the whole family (OAuth 2.0 Security BCP, refresh token rotation).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { NotFoundError } from './db.js';

export const ACCESS_PREFIX = 'rca_';
export const REFRESH_PREFIX = 'rcr_';
/** Longer than any token we issue; longer input is refused without a lookup. */
export const MAX_TOKEN_LENGTH = 128;

export function hashToken(plain: string): string {
  return createHash('sha256').update(plain, 'utf8').digest('hex');
}

function newToken(prefix: string): { plain: string; hash: string } {
  const plain = prefix + randomBytes(32).toString('base64url');
  return { plain, hash: hashToken(plain) };
}

/** A session signed in before the user's latest password change: refused, whatever its tokens say. */
const STALE = `(u.password_changed_at is not null and s.created_at < u.password_changed_at)`;

export interface TokenPair {
  sessionId: string;
  accessToken: string;
  accessExpiresIn: number;
  refreshToken: string;
  refreshExpiresIn: number;
}

export interface SessionTtls {
  accessSeconds: number;
  /** Absolute lifetime of a session (and so of every refresh token in it). */
  refreshSeconds: number;
}

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  last_used_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  user_agent: string | null;
  ip: string | null;
}

async function issuePair(trx: Knex, sessionId: string, sessionExpires: Date, ttl: SessionTtls): Promise<TokenPair> {
  const now = Date.now();
  const access = newToken(ACCESS_PREFIX);
  const refresh = newToken(REFRESH_PREFIX);
  const accessExpires = new Date(Math.min(now + ttl.accessSeconds * 1000, sessionExpires.getTime()));
  await trx('console_tokens').insert([
    { token_hash: access.hash, session_id: sessionId, kind: 'access', expires_at: accessExpires },
    { token_hash: refresh.hash, session_id: sessionId, kind: 'refresh', expires_at: sessionExpires },
  ]);
  return {
    sessionId,
    accessToken: access.plain,
    accessExpiresIn: Math.max(0, Math.round((accessExpires.getTime() - now) / 1000)),
    refreshToken: refresh.plain,
    refreshExpiresIn: Math.max(0, Math.round((sessionExpires.getTime() - now) / 1000)),
  };
}

/**
 * A new session for a user whose password was just checked against `verifiedHash`. The
 * user's row is read FOR SHARE inside the insert's transaction: when the password changed
 * after the check (a change that committed meanwhile, or one in flight, which this waits
 * for), no session is created and the answer is null. A change that starts after this
 * commits revokes the new session like every other.
 */
export async function startSession(
  db: Knex,
  userId: string,
  ttl: SessionTtls,
  client: { userAgent?: string; ip?: string },
  verifiedHash: string,
): Promise<TokenPair | null> {
  // Housekeeping on the user's own rows: ended sessions go (revoked ones after 30 days, kept for inspection).
  await db('console_sessions')
    .where({ user_id: userId })
    .where((q) => q.where('expires_at', '<', db.fn.now()).orWhere('revoked_at', '<', db.raw(`now() - interval '30 days'`)))
    .delete();
  return db.transaction(async (trx) => {
    const user = await trx('users').where({ id: userId }).forShare().first<{ password_hash: string } | undefined>('password_hash');
    if (!user || user.password_hash !== verifiedHash) return null;
    return insertSession(trx, userId, ttl, client);
  });
}

async function insertSession(trx: Knex.Transaction, userId: string, ttl: SessionTtls, client: { userAgent?: string; ip?: string }): Promise<TokenPair> {
  const expires = new Date(Date.now() + ttl.refreshSeconds * 1000);
  const [row] = await trx('console_sessions')
    .insert({ user_id: userId, expires_at: expires, user_agent: client.userAgent?.slice(0, 300) ?? null, ip: client.ip ?? null })
    .returning<Array<{ id: string }>>(['id']);
  return issuePair(trx, row.id, expires, ttl);
}

/**
 * Sets a new password and, in the same transaction, ends every session of the user: the
 * row lock of the update orders it against a concurrent sign-in (startSession). With
 * `newSession`, the caller (who just proved the current password) gets a fresh session,
 * created at the change, so it passes the `password_changed_at` check; every older one
 * is refused from now on even if a revocation were missed.
 */
export async function changePassword(
  db: Knex,
  userId: string,
  passwordHash: string,
  reason: 'password_changed' | 'password_reset',
  newSession?: { ttl: SessionTtls; client: { userAgent?: string; ip?: string } },
): Promise<TokenPair | null> {
  return db.transaction(async (trx) => {
    const n = await trx('users').where({ id: userId }).update({ password_hash: passwordHash, password_changed_at: trx.fn.now() });
    if (n !== 1) throw new NotFoundError(`no user "${userId}"`);
    await revokeAllIn(trx, userId, reason);
    return newSession ? insertSession(trx, userId, newSession.ttl, newSession.client) : null;
  });
}

async function revokeAllIn(trx: Knex.Transaction, userId: string, reason: string): Promise<void> {
  const ids = (
    await trx('console_sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: trx.fn.now(), revoked_reason: reason }).returning<Array<{ id: string }>>('id')
  ).map((r) => r.id);
  if (ids.length > 0) await trx('console_tokens').whereIn('session_id', ids).delete();
}

export type RefreshOutcome = { ok: true; pair: TokenPair; userId: string } | { ok: false; reason: 'unknown' | 'reused' | 'ended' };

/**
 * Exchanges a refresh token for a new pair. The spend is a guarded update (used_at is
 * null), so of two concurrent exchanges of one token exactly one wins and the other is
 * treated as a replay.
 */
export async function rotateRefresh(db: Knex, plain: string, ttl: SessionTtls): Promise<RefreshOutcome> {
  if (!plain.startsWith(REFRESH_PREFIX) || plain.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'unknown' };
  const hash = hashToken(plain);
  const outcome = await db.transaction(async (trx): Promise<RefreshOutcome> => {
    const token = await trx('console_tokens as t')
      .join('console_sessions as s', 's.id', 't.session_id')
      .join('users as u', 'u.id', 's.user_id')
      .where({ 't.token_hash': hash, 't.kind': 'refresh' })
      .first<{ session_id: string; used_at: Date | null; user_id: string; expires_at: Date; revoked_at: Date | null; stale: boolean } | undefined>(
        't.session_id',
        't.used_at',
        's.user_id',
        's.expires_at',
        's.revoked_at',
        trx.raw(`${STALE} as stale`),
      );
    if (!token) return { ok: false, reason: 'unknown' };
    if (token.revoked_at !== null || token.stale || token.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'ended' };
    const spent = await trx('console_tokens').where({ token_hash: hash }).whereNull('used_at').update({ used_at: trx.fn.now() });
    if (spent !== 1) return { ok: false, reason: 'reused' };
    await trx('console_sessions').where({ id: token.session_id }).update({ last_used_at: trx.fn.now() });
    // Expired access tokens of the session are dead weight; spent refresh tokens stay (reuse detection).
    await trx('console_tokens').where({ session_id: token.session_id, kind: 'access' }).where('expires_at', '<=', trx.fn.now()).delete();
    return { ok: true, userId: token.user_id, pair: await issuePair(trx, token.session_id, token.expires_at, ttl) };
  });
  if (!outcome.ok && outcome.reason === 'reused') await revokeSessionByToken(db, hash, 'refresh_reused');
  return outcome;
}

async function revokeSessionByToken(db: Knex, hash: string, reason: string): Promise<void> {
  const row = await db('console_tokens').where({ token_hash: hash }).first<{ session_id: string } | undefined>('session_id');
  if (row) await revokeSession(db, row.session_id, reason);
}

export async function revokeSession(db: Knex, sessionId: string, reason: string): Promise<boolean> {
  const n = await db('console_sessions').where({ id: sessionId }).whereNull('revoked_at').update({ revoked_at: db.fn.now(), revoked_reason: reason });
  // Tokens of a revoked session can never work again; delete them rather than keep dead secrets.
  await db('console_tokens').where({ session_id: sessionId }).delete();
  return n === 1;
}

/** The live session an access token belongs to, or null. */
export async function sessionForAccessToken(db: Knex, plain: string): Promise<{ sessionId: string; userId: string } | null> {
  if (!plain.startsWith(ACCESS_PREFIX) || plain.length > MAX_TOKEN_LENGTH) return null;
  const row = await db('console_tokens as t')
    .join('console_sessions as s', 's.id', 't.session_id')
    .join('users as u', 'u.id', 's.user_id')
    .where({ 't.token_hash': hashToken(plain), 't.kind': 'access' })
    .where('t.expires_at', '>', db.fn.now())
    .whereNull('s.revoked_at')
    .whereRaw(`not ${STALE}`)
    .where('s.expires_at', '>', db.fn.now())
    .first<{ id: string; user_id: string } | undefined>('s.id', 's.user_id');
  if (!row) return null;
  // "last active" for the sessions list, written at most once a minute
  await db('console_sessions').where({ id: row.id }).where('last_used_at', '<', db.raw(`now() - interval '1 minute'`)).update({ last_used_at: db.fn.now() });
  return { sessionId: row.id, userId: row.user_id };
}

/** The session a refresh token belongs to (spent or not), for logout by refresh cookie. */
export async function sessionForRefreshToken(db: Knex, plain: string): Promise<string | null> {
  if (!plain.startsWith(REFRESH_PREFIX) || plain.length > MAX_TOKEN_LENGTH) return null;
  const row = await db('console_tokens').where({ token_hash: hashToken(plain), kind: 'refresh' }).first<{ session_id: string } | undefined>('session_id');
  return row?.session_id ?? null;
}

export async function listSessions(db: Knex, userId: string): Promise<SessionRow[]> {
  return db('console_sessions')
    .where({ user_id: userId })
    .whereNull('revoked_at')
    .where('expires_at', '>', db.fn.now())
    .orderBy('created_at', 'desc')
    .select<SessionRow[]>('id', 'user_id', 'created_at', 'last_used_at', 'expires_at', 'revoked_at', 'user_agent', 'ip');
}

export async function ownsSession(db: Knex, userId: string, sessionId: string): Promise<boolean> {
  const row = await db('console_sessions').where({ id: sessionId, user_id: userId }).first<{ id: string } | undefined>('id');
  return row !== undefined;
}
