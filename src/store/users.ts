/** Console users (e-mail unique case-insensitively) and their roles in organisations. */
import type { Knex } from 'knex';
import { ConflictError, NotFoundError, isUniqueViolation, isUuid } from './db.js';

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export interface User {
  id: string;
  email: string;
  password_hash: string;
  created_at: Date;
  /** Sessions created before it are refused (src/store/sessions.ts); a change is changePassword there. */
  password_changed_at: Date | null;
  /** A temporary password (set by an operator): sessions are restricted to changing it (src/console/session-auth.ts). */
  password_must_change: boolean;
}

export interface Membership {
  org: { id: string; name: string };
  role: Role;
}

export interface Member {
  user: { id: string; email: string };
  role: Role;
  created_at: Date;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(raw: string): string {
  return raw.trim();
}

export function emailProblem(email: string): string | null {
  if (email.length === 0 || email.length > 254 || !EMAIL_RE.test(email)) return 'a valid e-mail address is required';
  return null;
}

/** `passwordMustChange`: the password was chosen by someone else (an operator), so it is temporary. */
export async function createUser(db: Knex, input: { email: string; passwordHash: string; passwordMustChange?: boolean }): Promise<User> {
  const email = normaliseEmail(input.email);
  const problem = emailProblem(email);
  if (problem) throw new ConflictError(problem);
  try {
    const [row] = (await db('users').insert({ email, password_hash: input.passwordHash, password_must_change: input.passwordMustChange ?? false }).returning('*')) as User[];
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`a user with e-mail "${email}" already exists`);
    throw err;
  }
}

export async function findUserByEmail(db: Knex, email: string): Promise<User | null> {
  const row = (await db('users').whereRaw('lower(email) = lower(?)', [normaliseEmail(email)]).first()) as User | undefined;
  return row ?? null;
}

export async function getUser(db: Knex, id: string): Promise<User> {
  const row = isUuid(id) ? ((await db('users').where({ id }).first()) as User | undefined) : undefined;
  if (!row) throw new NotFoundError(`no user "${id}"`);
  return row;
}

export async function membershipsOf(db: Knex, userId: string): Promise<Membership[]> {
  const rows = await db('memberships as m')
    .join('organizations as o', 'o.id', 'm.org_id')
    .where('m.user_id', userId)
    .orderBy('o.name')
    .select('o.id', 'o.name', 'm.role');
  return rows.map((r: { id: string; name: string; role: Role }) => ({ org: { id: r.id, name: r.name }, role: r.role }));
}

export async function roleIn(db: Knex, userId: string, orgId: string): Promise<Role | null> {
  const row = await db('memberships').where({ user_id: userId, org_id: orgId }).first<{ role: Role } | undefined>('role');
  return row?.role ?? null;
}

export async function listMembers(db: Knex, orgId: string): Promise<Member[]> {
  const rows = await db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', orgId)
    .orderBy('u.email')
    .select('u.id', 'u.email', 'm.role', 'm.created_at');
  return rows.map((r: { id: string; email: string; role: Role; created_at: Date }) => ({ user: { id: r.id, email: r.email }, role: r.role, created_at: r.created_at }));
}

export async function addMember(db: Knex, orgId: string, userId: string, role: Role): Promise<void> {
  try {
    await db('memberships').insert({ org_id: orgId, user_id: userId, role });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('the user is already a member of this organisation');
    throw err;
  }
}

/**
 * Changes a role or removes a member, refusing to leave the organisation without an
 * owner. The owners' rows are locked first, so two concurrent demotions cannot both pass.
 */
export async function changeMember(db: Knex, orgId: string, userId: string, change: { role: Role } | { remove: true }): Promise<Role> {
  return db.transaction(async (trx) => {
    const owners = await trx('memberships').where({ org_id: orgId, role: 'owner' }).forUpdate().select<Array<{ user_id: string }>>('user_id');
    const current = await trx('memberships').where({ org_id: orgId, user_id: userId }).forUpdate().first<{ role: Role } | undefined>('role');
    if (!current) throw new NotFoundError('no such member in this organisation');
    const losesOwner = current.role === 'owner' && ('remove' in change || change.role !== 'owner');
    if (losesOwner && owners.length <= 1) throw new ConflictError('the last owner cannot be removed or demoted; make someone else owner first');
    if ('remove' in change) await trx('memberships').where({ org_id: orgId, user_id: userId }).delete();
    else await trx('memberships').where({ org_id: orgId, user_id: userId }).update({ role: change.role });
    return current.role;
  });
}
