/**
 * Console sessions: opaque random tokens stored as SHA-256 digests. A session is the
 * family of one sign-in; its refresh token rotates on every use, and presenting a spent
 * refresh token revokes the whole family (OAuth 2.0 Security BCP, refresh token rotation),
 * except within REFRESH_GRACE_SECONDS of its exchange, when it gets the very pair that
 * exchange issued (two tabs refreshing at once). A session ends at its absolute lifetime
 * from sign-in and after an idle time without activity (ASVS 3.3.2).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
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
  /**
   * Absolute lifetime of a session from its sign-in (and so of every refresh token in it);
   * refreshing never extends it. Also applied to sessions signed in under a longer setting.
   */
  refreshSeconds: number;
  /**
   * A session with no activity for this long ends. Activity is a refresh, or an access token
   * used (recorded at most once a minute); an access token never outlives this from its issue.
   */
  idleSeconds: number;
}

/**
 * How long after its exchange a refresh token may be presented again and get the same new
 * pair (a concurrent refresh of another tab or a retried request), instead of counting as
 * reuse. Long enough for a slow answer, short enough that a stolen token replayed later is
 * still caught.
 */
export const REFRESH_GRACE_SECONDS = 20;

/** When a session ends: the earlier of its stored end and sign-in + the lifetime configured now. */
function sessionEnd(db: Knex, ttl: SessionTtls): Knex.Raw {
  return db.raw('least(s.expires_at, s.created_at + make_interval(secs => ?))', [ttl.refreshSeconds]);
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
  // Never past the idle timeout from now: an access token cannot keep an idle session alive.
  const accessExpires = new Date(Math.min(now + Math.min(ttl.accessSeconds, ttl.idleSeconds) * 1000, sessionExpires.getTime()));
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
 * is refused from now on even if a revocation were missed. The owner's own change
 * (`password_changed`) clears `password_must_change`; an operator's reset
 * (`password_reset`) sets it: that password is temporary.
 */
export async function changePassword(
  db: Knex,
  userId: string,
  passwordHash: string,
  reason: 'password_changed' | 'password_reset',
  newSession?: { ttl: SessionTtls; client: { userAgent?: string; ip?: string } },
): Promise<TokenPair | null> {
  return db.transaction(async (trx) => {
    const n = await trx('users').where({ id: userId }).update({ password_hash: passwordHash, password_changed_at: trx.fn.now(), password_must_change: reason === 'password_reset' });
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

export type RefreshOutcome =
  | { ok: true; pair: TokenPair; userId: string; sessionId: string; /** the pair a concurrent exchange of this token issued (grace) */ repeated: boolean }
  | { ok: false; reason: RefreshRefusal; sessionId?: string };

/**
 * Why a refresh was refused: `unknown` token; `reused` (a spent token after its grace: the
 * session is revoked); `ended` (revoked, or signed in before the latest password change);
 * `idle` (no activity for `idleSeconds`: the session is revoked); `expired` (its absolute
 * lifetime is over).
 */
export type RefreshRefusal = 'unknown' | 'reused' | 'ended' | 'idle' | 'expired';

/**
 * Exchanges a refresh token for a new pair. The spend is a guarded update (used_at is
 * null), so of two concurrent exchanges of one token exactly one wins. The loser, or anyone
 * presenting the token again within REFRESH_GRACE_SECONDS, gets the pair the winner got (kept
 * sealed with a key only the token gives, see seal()), while it is the session's newest;
 * after the grace, or once that pair was itself exchanged, presenting the token is reuse and
 * revokes the session.
 */
export async function rotateRefresh(db: Knex, plain: string, ttl: SessionTtls): Promise<RefreshOutcome> {
  if (!plain.startsWith(REFRESH_PREFIX) || plain.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'unknown' };
  const hash = hashToken(plain);
  const outcome = await db.transaction(async (trx): Promise<RefreshOutcome> => {
    const token = await trx('console_tokens as t')
      .join('console_sessions as s', 's.id', 't.session_id')
      .join('users as u', 'u.id', 's.user_id')
      .where({ 't.token_hash': hash, 't.kind': 'refresh' })
      .first<
        { session_id: string; user_id: string; ends_at: Date; revoked_at: Date | null; stale: boolean; expired: boolean; idle: boolean } | undefined
      >(
        't.session_id',
        's.user_id',
        trx.raw('? as ends_at', [sessionEnd(trx, ttl)]),
        's.revoked_at',
        trx.raw(`${STALE} as stale`),
        trx.raw('? <= now() as expired', [sessionEnd(trx, ttl)]),
        trx.raw('s.last_used_at <= now() - make_interval(secs => ?) as idle', [ttl.idleSeconds]),
      );
    if (!token) return { ok: false, reason: 'unknown' };
    const sessionId = token.session_id;
    if (token.revoked_at !== null || token.stale) return { ok: false, reason: 'ended', sessionId };
    if (token.expired) return { ok: false, reason: 'expired', sessionId };
    if (token.idle) return { ok: false, reason: 'idle', sessionId };
    const spent = await trx('console_tokens').where({ token_hash: hash }).whereNull('used_at').update({ used_at: trx.fn.now() });
    if (spent !== 1) {
      // Spent already: by a concurrent exchange (whose commit the update above waited for) or earlier.
      const pair = await pairWithinGrace(trx, plain, hash, sessionId);
      return pair ? { ok: true, userId: token.user_id, sessionId, pair, repeated: true } : { ok: false, reason: 'reused', sessionId };
    }
    await trx('console_sessions').where({ id: sessionId }).update({ last_used_at: trx.fn.now() });
    // Expired access tokens of the session are dead weight; spent refresh tokens stay (reuse detection),
    // but only the newest keeps its sealed successor: an older token's grace is over.
    await trx('console_tokens').where({ session_id: sessionId, kind: 'access' }).where('expires_at', '<=', trx.fn.now()).delete();
    await trx('console_tokens').where({ session_id: sessionId, kind: 'refresh' }).whereNotNull('successor').update({ successor: null });
    const pair = await issuePair(trx, sessionId, token.ends_at, ttl);
    await trx('console_tokens').where({ token_hash: hash }).update({ successor: seal(plain, pair) });
    return { ok: true, userId: token.user_id, sessionId, pair, repeated: false };
  });
  if (!outcome.ok && outcome.reason === 'reused') await revokeSessionByToken(db, hash, 'refresh_reused');
  if (!outcome.ok && outcome.reason === 'idle') await revokeSessionByToken(db, hash, 'idle_timeout');
  return outcome;
}

/**
 * The pair an exchange of this (spent) token issued, if the exchange was less than
 * REFRESH_GRACE_SECONDS ago and its refresh token is still unspent; else null (reuse).
 */
async function pairWithinGrace(trx: Knex.Transaction, plain: string, hash: string, sessionId: string): Promise<TokenPair | null> {
  const row = await trx('console_tokens')
    .where({ token_hash: hash })
    .first<{ successor: string | null; in_grace: boolean } | undefined>(
      'successor',
      trx.raw('used_at > now() - make_interval(secs => ?) as in_grace', [REFRESH_GRACE_SECONDS]),
    );
  if (!row?.in_grace || row.successor === null) return null;
  const next = unseal(plain, row.successor);
  if (!next) return null;
  const tokens = await trx('console_tokens')
    .where({ session_id: sessionId })
    .whereIn('token_hash', [hashToken(next.accessToken), hashToken(next.refreshToken)])
    .select<Array<{ kind: string; expires_at: Date; used_at: Date | null }>>('kind', 'expires_at', 'used_at');
  const access = tokens.find((t) => t.kind === 'access');
  const refresh = tokens.find((t) => t.kind === 'refresh');
  if (!access || !refresh || refresh.used_at !== null) return null;
  const now = Date.now();
  return {
    sessionId,
    accessToken: next.accessToken,
    accessExpiresIn: Math.max(0, Math.round((access.expires_at.getTime() - now) / 1000)),
    refreshToken: next.refreshToken,
    refreshExpiresIn: Math.max(0, Math.round((refresh.expires_at.getTime() - now) / 1000)),
  };
}

/**
 * Seals the pair an exchange issued under a key derived from the exchanged token's plain text
 * (HKDF-SHA256, AES-256-GCM). The database keeps only that token's SHA-256 digest, so the
 * sealed pair opens only for whoever presents the token again: a database reader gets no
 * live token from it.
 */
function seal(plain: string, pair: TokenPair): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', graceKey(plain), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify([pair.accessToken, pair.refreshToken]), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function unseal(plain: string, sealed: string): { accessToken: string; refreshToken: string } | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', graceKey(plain), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const [accessToken, refreshToken] = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as [string, string];
    return typeof accessToken === 'string' && typeof refreshToken === 'string' ? { accessToken, refreshToken } : null;
  } catch {
    return null;
  }
}

function graceKey(plain: string): Buffer {
  return Buffer.from(hkdfSync('sha256', plain, Buffer.alloc(0), 'console refresh grace', 32));
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

/** The user's live sessions (not revoked, idle or past their lifetime); `expires_at` is the absolute end. */
export async function listSessions(db: Knex, userId: string, ttl: SessionTtls): Promise<SessionRow[]> {
  return db('console_sessions as s')
    .where({ 's.user_id': userId })
    .whereNull('s.revoked_at')
    .where(sessionEnd(db, ttl), '>', db.fn.now())
    .where('s.last_used_at', '>', db.raw('now() - make_interval(secs => ?)', [ttl.idleSeconds]))
    .orderBy('s.created_at', 'desc')
    .select<SessionRow[]>('s.id', 's.user_id', 's.created_at', 's.last_used_at', db.raw('? as expires_at', [sessionEnd(db, ttl)]), 's.revoked_at', 's.user_agent', 's.ip');
}

export async function ownsSession(db: Knex, userId: string, sessionId: string): Promise<boolean> {
  const row = await db('console_sessions').where({ id: sessionId, user_id: userId }).first<{ id: string } | undefined>('id');
  return row !== undefined;
}
