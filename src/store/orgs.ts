/** Organisations: the owners of API keys, with a status and an optional call balance. */
import type { Knex } from 'knex';
import { ConflictError, NotFoundError, isUniqueViolation, isUuid } from './db.js';

export type OrgStatus = 'active' | 'suspended';

export interface Organization {
  id: string;
  name: string;
  status: OrgStatus;
  /** null = unlimited */
  balance: number | null;
  created_at: Date;
}

export async function createOrg(db: Knex, input: { name: string; balance?: number | null }): Promise<Organization> {
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw new ConflictError('organisation name must be 1 to 200 characters');
  if (isUuid(name)) throw new ConflictError('organisation name must not look like a UUID (names and ids are interchangeable on the CLI)');
  checkBalance(input.balance ?? null);
  try {
    const [row] = await db<Organization>('organizations').insert({ name, balance: input.balance ?? null }).returning('*');
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError(`organisation "${name}" already exists`);
    throw err;
  }
}

export async function listOrgs(db: Knex): Promise<Organization[]> {
  return db<Organization>('organizations').orderBy('created_at').orderBy('name');
}

/** An organisation by id or by name. */
export async function resolveOrg(db: Knex, ref: string): Promise<Organization> {
  const q = db<Organization>('organizations');
  const row = isUuid(ref) ? await q.where({ id: ref }).first() : await q.where({ name: ref }).first();
  if (!row) throw new NotFoundError(`no organisation "${ref}"`);
  return row;
}

export async function setOrgStatus(db: Knex, ref: string, status: OrgStatus): Promise<Organization> {
  const org = await resolveOrg(db, ref);
  const [row] = await db<Organization>('organizations').where({ id: org.id }).update({ status }).returning('*');
  return row;
}

function checkBalance(v: number | null): void {
  if (v !== null && (!Number.isSafeInteger(v) || v < 0)) throw new ConflictError('balance must be a whole number ≥ 0');
}

/** `set`: a new balance (null = unlimited); `add`: a signed amount added to a limited balance. */
export async function changeBalance(db: Knex, ref: string, change: { set: number | null } | { add: number }): Promise<Organization> {
  const org = await resolveOrg(db, ref);
  if ('set' in change) {
    checkBalance(change.set);
    const [row] = await db<Organization>('organizations').where({ id: org.id }).update({ balance: change.set }).returning('*');
    return row;
  }
  if (!Number.isSafeInteger(change.add)) throw new ConflictError('--add takes a whole number');
  const [row] = (await db('organizations')
    .where({ id: org.id })
    .whereNotNull('balance')
    .whereRaw('balance + ? >= 0', [change.add])
    .update({ balance: db.raw('balance + ?', [change.add]) })
    .returning('*')) as Organization[];
  if (row) return row;
  const now = await resolveOrg(db, ref);
  if (now.balance === null) throw new ConflictError(`organisation "${now.name}" has an unlimited balance; use --set N to limit it`);
  throw new ConflictError(`balance of "${now.name}" is ${now.balance}; adding ${change.add} would make it negative`);
}
