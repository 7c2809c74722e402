/**
 * The audit log: who did what, to what, when and from where. Two kinds of entry:
 * - an organisation's (key, member, invitation and operator changes, refused roles):
 *   `orgId` set, shown to its owners and admins;
 * - an account's security events (sign-ins, failed and throttled sign-ins, sign-outs,
 *   password changes, session revocations, refresh-token reuse): `userId` set (null for
 *   an e-mail without an account), no organisation; shown to the account itself.
 * A change is written with its entry in one transaction (`audited`); an event that changes
 * nothing (a failed sign-in, a refused role) is a plain insert (`writeAudit`).
 */
import type { Knex } from 'knex';
import { isUuid } from './db.js';

export type AuditTargetType = 'key' | 'member' | 'invitation' | 'org' | 'user' | 'session';

export interface AuditActor {
  /** null: the recog CLI, or someone not signed in (a failed sign-in) */
  id: string | null;
  email: string;
}

/** Changes made with the server CLI are done by this actor. */
export const CLI_ACTOR: AuditActor = Object.freeze({ id: null, email: 'recog CLI' });

/** Every action written, for the docs, the console's filter and the tests. */
export const AUDIT_ACTIONS = [
  'key.create', 'key.update', 'key.suspend', 'key.resume', 'key.revoke',
  'member.add', 'member.role_change', 'member.remove',
  'invitation.create', 'invitation.accept', 'invitation.revoke',
  'org.create', 'org.suspend', 'org.resume', 'org.balance', 'org.mfa_requirement',
  'access.forbidden_role',
  'user.create', 'user.password_change', 'user.password_change_failed', 'user.password_reset',
  'user.mfa_enroll', 'user.mfa_disable', 'user.mfa_recovery_code_used', 'session.mfa_failed', 'session.mfa_verify',
  'session.login', 'session.login_failed', 'session.login_throttled', 'session.logout', 'session.revoke', 'session.refresh_reused',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  /** The organisation whose log shows it; null or absent for an account's security event. */
  orgId?: string | null;
  /** The account the entry concerns (its security log). */
  userId?: string | null;
  actor: AuditActor;
  action: AuditAction;
  target: { type: AuditTargetType; id: string; name?: string | null };
  details?: Record<string, unknown>;
  ip?: string | null;
}

export interface AuditRow {
  id: number;
  created_at: Date;
  org_id: string | null;
  user_id: string | null;
  actor: { id: string | null; email: string };
  action: string;
  target: { type: string; id: string; name: string | null };
  details: Record<string, unknown>;
  ip: string | null;
}

/** Writes one entry with `db`, which is the change's transaction when there is a change. */
export async function writeAudit(db: Knex, e: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    org_id: e.orgId ?? null,
    user_id: e.userId ?? null,
    actor_user_id: e.actor.id,
    // bounded: a failed sign-in records the e-mail as typed
    actor_email: e.actor.email.slice(0, 254),
    action: e.action,
    target_type: e.target.type,
    target_id: e.target.id,
    target_name: e.target.name?.slice(0, 254) ?? null,
    details: JSON.stringify(e.details ?? {}),
    ip: e.ip ?? null,
  });
}

/**
 * Runs `change` in a transaction and writes the entries it calls for in the same one: both
 * commit or neither does. `entries` sees the change's result (null or [] writes nothing).
 * Store functions take the transaction as their `db`; those that open their own transaction
 * get a savepoint inside this one.
 */
export async function audited<T>(db: Knex, change: (trx: Knex.Transaction) => Promise<T>, entries: (result: T) => AuditEntry | AuditEntry[] | null): Promise<T> {
  return db.transaction(async (trx) => {
    const result = await change(trx);
    const list = entries(result);
    for (const e of list === null ? [] : Array.isArray(list) ? list : [list]) await writeAudit(trx, e);
    return result;
  });
}

/** Whose entries: one organisation's, one account's, or (operators) all of them. */
export type AuditScope = { orgId: string } | { userId: string } | { all: true };

export interface AuditFilter {
  /** Exact actions, or `prefix.*` (e.g. `key.*`); any of them. */
  actions?: string[];
  /** The actor's user id, or e-mail (case-insensitive); `recog CLI` for the CLI. */
  actor?: string;
  /** From this instant (inclusive). */
  since?: Date;
  /** Before this instant (exclusive). */
  until?: Date;
  /** Entries older than this id (paging, newest first). */
  beforeId?: number;
}

/** One action filter: `key.create`, `key.*`, `session.login_failed`. */
export const ACTION_FILTER_RE = /^[a-z][a-z_]*\.(\*|[a-z][a-z_]*)$/;

function query(db: Knex, scope: AuditScope, f: AuditFilter): Knex.QueryBuilder {
  const q = db('audit_log');
  if ('orgId' in scope) q.where({ org_id: scope.orgId });
  else if ('userId' in scope) q.where({ user_id: scope.userId });
  if (f.actions && f.actions.length > 0) {
    const exact = f.actions.filter((a) => !a.endsWith('.*'));
    const prefixes = f.actions.filter((a) => a.endsWith('.*')).map((a) => a.slice(0, -1));
    q.where((w) => {
      if (exact.length > 0) w.orWhereIn('action', exact);
      // prefixes are [a-z_]+. (ACTION_FILTER_RE); '_' is a LIKE wildcard, so it is escaped
      for (const p of prefixes) w.orWhereRaw(`action like ? escape '\\'`, [`${p.replace(/_/g, '\\_')}%`]);
    });
  }
  if (f.actor !== undefined) {
    if (isUuid(f.actor)) q.where({ actor_user_id: f.actor });
    else q.whereRaw('lower(actor_email) = lower(?)', [f.actor.trim()]);
  }
  if (f.since) q.where('created_at', '>=', f.since);
  if (f.until) q.where('created_at', '<', f.until);
  if (f.beforeId !== undefined) q.where('id', '<', f.beforeId);
  return q;
}

function toRow(r: Record<string, unknown>): AuditRow {
  return {
    id: Number(r.id),
    created_at: r.created_at as Date,
    org_id: (r.org_id as string | null) ?? null,
    user_id: (r.user_id as string | null) ?? null,
    actor: { id: (r.actor_user_id as string | null) ?? null, email: r.actor_email as string },
    action: r.action as string,
    target: { type: r.target_type as string, id: r.target_id as string, name: (r.target_name as string | null) ?? null },
    details: (r.details as Record<string, unknown>) ?? {},
    ip: (r.ip as string | null) ?? null,
  };
}

/** Newest first. */
export async function listAudit(db: Knex, scope: AuditScope, limit: number, filter: AuditFilter = {}): Promise<AuditRow[]> {
  const rows = (await query(db, scope, filter).orderBy('id', 'desc').limit(limit)) as Array<Record<string, unknown>>;
  return rows.map(toRow);
}

/** Every matching entry, newest first, a page at a time (an export never holds the whole log). */
export async function* auditPages(db: Knex, scope: AuditScope, filter: AuditFilter = {}, pageSize = 500): AsyncGenerator<AuditRow[]> {
  let beforeId = filter.beforeId;
  for (;;) {
    const page = await listAudit(db, scope, pageSize, { ...filter, beforeId });
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    beforeId = page[page.length - 1].id;
  }
}

/** The account a session belongs to (for the entries of a sign-out or a revocation). */
export async function accountOfSession(db: Knex, sessionId: string): Promise<AuditActor | null> {
  const row = await db('console_sessions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where('s.id', sessionId)
    .first<{ id: string; email: string } | undefined>('u.id', 'u.email');
  return row ?? null;
}

