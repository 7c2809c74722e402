/**
 * Invitations to an organisation (issue 29). Adding a member creates one: a one-time link
 * whose 256-bit random token is kept only as its SHA-256 digest. The invitee sets their own
 * password (no account yet) or accepts as the existing account; either way the membership,
 * the account (if new), the spent invitation and the audit entry are one transaction.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { writeAudit } from './audit.js';
import { ConflictError, NotFoundError, isUniqueViolation, isUuid } from './db.js';
import { hashToken, MAX_TOKEN_LENGTH } from './sessions.js';
import { emailProblem, normaliseEmail, type Role } from './users.js';

export const INVITATION_PREFIX = 'rci_';
/** How long a link stays valid. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;

export interface Invitation {
  id: string;
  org_id: string;
  email: string;
  role: Role;
  invited_by: string | null;
  invited_by_email: string;
  created_at: Date;
  expires_at: Date;
}

export interface Actor {
  /** null: an operator with the recog CLI */
  id: string | null;
  email: string;
}

/** The invitation is for another account than the one presented. */
export class WrongAccountError extends Error {}

const COLUMNS = ['id', 'org_id', 'email', 'role', 'invited_by', 'invited_by_email', 'created_at', 'expires_at'] as const;
const NO_SUCH = 'no such invitation, or it was already used, revoked or has expired';

/** Pending: neither accepted nor revoked, and not expired. */
function pending<T extends Knex.QueryBuilder>(q: T, db: Knex, alias = ''): T {
  const c = (col: string) => (alias ? `${alias}.${col}` : col);
  return q.whereNull(c('accepted_at')).whereNull(c('revoked_at')).where(c('expires_at'), '>', db.fn.now()) as T;
}

/**
 * A new invitation; an earlier pending one for the same e-mail in this organisation is
 * revoked (the newest link is the one that works). Refuses (ConflictError) an e-mail that
 * is already a member here: the members list shows that anyway. Says nothing about
 * whether the e-mail has an account elsewhere.
 *
 * `deliver` runs last inside the transaction (the invitation e-mail): when it throws, nothing
 * is kept, neither the invitation nor its audit entry, and an earlier link still works.
 * `delivery` is recorded in the audit entry.
 */
export async function createInvitation(
  db: Knex,
  input: {
    orgId: string;
    email: string;
    role: Role;
    inviter: Actor;
    ip?: string | null;
    ttlSeconds?: number;
    delivery?: 'email' | 'link';
    deliver?: (invitation: Invitation, token: string) => Promise<void>;
  },
): Promise<{ invitation: Invitation; token: string }> {
  const email = normaliseEmail(input.email);
  const problem = emailProblem(email);
  if (problem) throw new ConflictError(problem);
  const token = INVITATION_PREFIX + randomBytes(32).toString('base64url');
  const expires = new Date(Date.now() + (input.ttlSeconds ?? INVITATION_TTL_SECONDS) * 1000);
  return db.transaction(async (trx) => {
    const member = await trx('memberships as m')
      .join('users as u', 'u.id', 'm.user_id')
      .where('m.org_id', input.orgId)
      .whereRaw('lower(u.email) = lower(?)', [email])
      .first<{ role: Role } | undefined>('m.role');
    if (member) throw new ConflictError(`${email} is already a member of this organisation (${member.role})`);
    const replaced = await pending(trx('console_invitations').where({ org_id: input.orgId }).whereRaw('lower(email) = lower(?)', [email]), trx).update({ revoked_at: trx.fn.now() });
    const [invitation] = await trx('console_invitations')
      .insert({
        token_hash: hashToken(token),
        org_id: input.orgId,
        email,
        role: input.role,
        invited_by: input.inviter.id,
        invited_by_email: input.inviter.email,
        expires_at: expires,
      })
      .returning<Invitation[]>([...COLUMNS]);
    await writeAudit(trx, {
      orgId: input.orgId,
      actor: input.inviter,
      action: 'invitation.create',
      target: { type: 'invitation', id: invitation.id, name: email },
      details: { role: input.role, expires_at: expires.toISOString(), ...(replaced > 0 ? { replaced } : {}), ...(input.delivery ? { delivery: input.delivery } : {}) },
      ip: input.ip,
    });
    await input.deliver?.(invitation, token);
    return { invitation, token };
  });
}

export async function listPendingInvitations(db: Knex, orgId: string): Promise<Invitation[]> {
  return pending(db('console_invitations').where({ org_id: orgId }), db).orderBy('created_at', 'desc').select<Invitation[]>([...COLUMNS]);
}

export async function getPendingInvitation(db: Knex, orgId: string, id: string): Promise<Invitation> {
  const row = isUuid(id) ? await pending(db('console_invitations').where({ org_id: orgId, id }), db).first<Invitation | undefined>([...COLUMNS]) : undefined;
  if (!row) throw new NotFoundError(NO_SUCH);
  return row;
}

export async function revokeInvitation(db: Knex, orgId: string, id: string, actor: Actor, ip?: string | null): Promise<void> {
  await db.transaction(async (trx) => {
    const [row] = await pending(trx('console_invitations').where({ org_id: orgId, id }), trx)
      .update({ revoked_at: trx.fn.now() })
      .returning<Array<{ email: string; role: Role }>>(['email', 'role']);
    if (!row) throw new NotFoundError(NO_SUCH);
    await writeAudit(trx, { orgId, actor, action: 'invitation.revoke', target: { type: 'invitation', id, name: row.email }, details: { role: row.role }, ip });
  });
}

export interface InvitationView extends Invitation {
  org_name: string;
  /** Whether an account with the invitation's e-mail exists: told only to the token's holder. */
  account_exists: boolean;
}

/** The pending invitation a token belongs to, or null (unknown, used, revoked, expired alike). */
export async function invitationByToken(db: Knex, plain: string): Promise<InvitationView | null> {
  if (!plain.startsWith(INVITATION_PREFIX) || plain.length > MAX_TOKEN_LENGTH) return null;
  const row = await pending(db('console_invitations as i').join('organizations as o', 'o.id', 'i.org_id').where('i.token_hash', hashToken(plain)), db, 'i').first<
    (Invitation & { org_name: string }) | undefined
  >(...COLUMNS.map((c) => `i.${c}`), 'o.name as org_name');
  if (!row) return null;
  const account = await db('users').whereRaw('lower(email) = lower(?)', [row.email]).first<{ id: string } | undefined>('id');
  return { ...row, account_exists: account !== undefined };
}

export type AcceptAs = { newAccount: { passwordHash: string } } | { userId: string };

/**
 * Spends the invitation and makes the member: with `newAccount`, the account is created
 * with the invitee's own password (ConflictError when one exists by now: sign in and accept
 * instead); with `userId`, that account must have the invitation's e-mail. The invitation
 * row is locked first, so a token is spent at most once.
 */
export async function acceptInvitation(
  db: Knex,
  plain: string,
  as: AcceptAs,
  ip?: string | null,
): Promise<{ user: { id: string; email: string }; org: { id: string; name: string }; role: Role; newAccount: boolean }> {
  if (!plain.startsWith(INVITATION_PREFIX) || plain.length > MAX_TOKEN_LENGTH) throw new NotFoundError(NO_SUCH);
  return db.transaction(async (trx) => {
    const inv = await pending(trx('console_invitations').where({ token_hash: hashToken(plain) }), trx).forUpdate().first<Invitation | undefined>([...COLUMNS]);
    if (!inv) throw new NotFoundError(NO_SUCH);
    let user: { id: string; email: string };
    if ('newAccount' in as) {
      const existing = await trx('users').whereRaw('lower(email) = lower(?)', [inv.email]).first<{ id: string } | undefined>('id');
      if (existing) throw new ConflictError(`an account for ${inv.email} exists; sign in as it to accept`);
      try {
        [user] = await trx('users').insert({ email: inv.email, password_hash: as.newAccount.passwordHash, password_must_change: false }).returning<Array<{ id: string; email: string }>>(['id', 'email']);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ConflictError(`an account for ${inv.email} exists; sign in as it to accept`);
        throw err;
      }
    } else {
      const found = await trx('users').where({ id: as.userId }).first<{ id: string; email: string } | undefined>('id', 'email');
      if (!found || found.email.toLowerCase() !== inv.email.toLowerCase()) throw new WrongAccountError(`this invitation is for ${inv.email}`);
      user = found;
    }
    try {
      await trx('memberships').insert({ org_id: inv.org_id, user_id: user.id, role: inv.role });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`${user.email} is already a member of this organisation`);
      throw err;
    }
    await trx('console_invitations').where({ id: inv.id }).update({ accepted_at: trx.fn.now(), accepted_by: user.id });
    await writeAudit(trx, {
      orgId: inv.org_id,
      actor: user,
      action: 'invitation.accept',
      target: { type: 'member', id: user.id, name: user.email },
      details: { role: inv.role, invitation_id: inv.id, invited_by: inv.invited_by_email, new_account: 'newAccount' in as },
      ip,
    });
    const org = await trx('organizations').where({ id: inv.org_id }).first<{ id: string; name: string }>('id', 'name');
    return { user, org, role: inv.role, newAccount: 'newAccount' in as };
  });
}
