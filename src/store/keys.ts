/**
 * API keys: generated here, stored only as a SHA-256 hash, looked up by hash on every
 * call (no cache, so a suspension takes effect on the next request on every replica).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { ConflictError, NotFoundError, isUuid } from './db.js';

export const KEY_PREFIX = 'cvk_';
/** Characters of the key kept in clear (prefix + 8) so operators can tell keys apart. */
const VISIBLE_CHARS = KEY_PREFIX.length + 8;

export type KeyStatus = 'active' | 'suspended' | 'revoked';

export interface ApiKey {
  id: string;
  org_id: string;
  prefix: string;
  name: string;
  description: string | null;
  status: KeyStatus;
  /** Labels of the model catalog, or ["*"] for all; [] = none (refused with 403). */
  classes: string[];
  monthly_quota: number;
  rate_limit_per_minute: number | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const PUBLIC_COLUMNS = [
  'id', 'org_id', 'prefix', 'name', 'description', 'status', 'classes', 'monthly_quota',
  'rate_limit_per_minute', 'expires_at', 'created_at', 'updated_at', 'last_used_at', 'revoked_at',
] as const;

export function hashApiKey(plain: string): string {
  return createHash('sha256').update(plain, 'utf8').digest('hex');
}

/** 32 random bytes (256 bits) behind a readable prefix. */
export function generateApiKey(): { plain: string; prefix: string; hash: string } {
  const plain = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { plain, prefix: plain.slice(0, VISIBLE_CHARS), hash: hashApiKey(plain) };
}

export interface KeyFields {
  name?: string;
  description?: string | null;
  classes?: string[];
  monthlyQuota?: number;
  rateLimitPerMinute?: number | null;
  expiresAt?: Date | null;
}

function checkFields(f: KeyFields): void {
  if (f.name !== undefined && (f.name.trim() === '' || f.name.length > 200)) throw new ConflictError('name must be 1 to 200 characters');
  if (f.description != null && f.description.length > 2000) throw new ConflictError('description must be at most 2000 characters');
  if (f.monthlyQuota !== undefined && (!Number.isInteger(f.monthlyQuota) || f.monthlyQuota < 0 || f.monthlyQuota > 2_147_483_647)) {
    throw new ConflictError('quota must be a whole number ≥ 0');
  }
  if (f.rateLimitPerMinute != null && (!Number.isInteger(f.rateLimitPerMinute) || f.rateLimitPerMinute < 1 || f.rateLimitPerMinute > 1_000_000)) {
    throw new ConflictError('rate limit must be a whole number ≥ 1 per minute');
  }
  if (f.expiresAt != null && Number.isNaN(f.expiresAt.getTime())) throw new ConflictError('expiry must be an ISO-8601 date');
  if (f.classes !== undefined && f.classes.includes('*') && f.classes.length > 1) throw new ConflictError('classes: "*" stands alone');
}

export async function createKey(
  db: Knex,
  input: KeyFields & { orgId: string; name: string; monthlyQuota: number },
): Promise<{ key: string; record: ApiKey }> {
  checkFields(input);
  const { plain, prefix, hash } = generateApiKey();
  const [record] = await db('api_keys')
    .insert({
      org_id: input.orgId,
      prefix,
      key_hash: hash,
      name: input.name.trim(),
      description: input.description ?? null,
      classes: JSON.stringify(input.classes ?? ['*']),
      monthly_quota: input.monthlyQuota,
      rate_limit_per_minute: input.rateLimitPerMinute ?? null,
      expires_at: input.expiresAt ?? null,
    })
    .returning<ApiKey[]>(PUBLIC_COLUMNS);
  return { key: plain, record };
}

export async function listKeys(db: Knex, orgId?: string): Promise<ApiKey[]> {
  const q = db('api_keys').select(PUBLIC_COLUMNS as unknown as string[]).orderBy('created_at');
  if (orgId) q.where({ org_id: orgId });
  return q;
}

export async function getKey(db: Knex, id: string): Promise<ApiKey> {
  if (!isUuid(id)) throw new NotFoundError(`no key "${id}" (keys are named by their id)`);
  const row = (await db('api_keys').select(PUBLIC_COLUMNS as unknown as string[]).where({ id }).first()) as ApiKey | undefined;
  if (!row) throw new NotFoundError(`no key "${id}"`);
  return row;
}

export async function updateKey(db: Knex, id: string, f: KeyFields): Promise<ApiKey> {
  checkFields(f);
  const current = await getKey(db, id);
  if (current.status === 'revoked') throw new ConflictError('the key is revoked; revoked keys cannot be changed');
  const patch: Record<string, unknown> = { updated_at: db.fn.now() };
  if (f.name !== undefined) patch.name = f.name.trim();
  if (f.description !== undefined) patch.description = f.description;
  if (f.classes !== undefined) patch.classes = JSON.stringify(f.classes);
  if (f.monthlyQuota !== undefined) patch.monthly_quota = f.monthlyQuota;
  if (f.rateLimitPerMinute !== undefined) patch.rate_limit_per_minute = f.rateLimitPerMinute;
  if (f.expiresAt !== undefined) patch.expires_at = f.expiresAt;
  const [row] = await db('api_keys').where({ id }).whereNot({ status: 'revoked' }).update(patch).returning<ApiKey[]>(PUBLIC_COLUMNS);
  if (!row) throw new ConflictError('the key is revoked; revoked keys cannot be changed');
  return row;
}

const TRANSITIONS: Record<'suspend' | 'resume' | 'revoke', { from: KeyStatus[]; to: KeyStatus }> = {
  suspend: { from: ['active', 'suspended'], to: 'suspended' },
  resume: { from: ['active', 'suspended'], to: 'active' },
  revoke: { from: ['active', 'suspended', 'revoked'], to: 'revoked' },
};

/** suspend/resume are idempotent between active and suspended; revoked is final. */
export async function changeKeyStatus(db: Knex, id: string, action: 'suspend' | 'resume' | 'revoke'): Promise<ApiKey> {
  return (await transitionKey(db, id, action)).key;
}

/**
 * changeKeyStatus, also saying what the status was. In a transaction the key's row is locked
 * first, so `from` is the status this change found (an audit entry is written only for a real change).
 */
export async function transitionKey(db: Knex, id: string, action: 'suspend' | 'resume' | 'revoke'): Promise<{ from: KeyStatus; key: ApiKey }> {
  if (!isUuid(id)) throw new NotFoundError(`no key "${id}" (keys are named by their id)`);
  const current = (await db('api_keys').select(PUBLIC_COLUMNS as unknown as string[]).where({ id }).forUpdate().first()) as ApiKey | undefined;
  if (!current) throw new NotFoundError(`no key "${id}"`);
  const t = TRANSITIONS[action];
  if (!t.from.includes(current.status)) throw new ConflictError(`the key is ${current.status}; it cannot be ${action}d (revoked is final: create a new key)`);
  if (current.status === t.to) return { from: current.status, key: current };
  const patch: Record<string, unknown> = { status: t.to, updated_at: db.fn.now() };
  if (t.to === 'revoked') patch.revoked_at = db.fn.now();
  // guarded update: a concurrent revoke cannot be undone by a resume
  const [row] = await db('api_keys').where({ id }).whereIn('status', t.from).update(patch).returning<ApiKey[]>(PUBLIC_COLUMNS);
  if (!row) throw new ConflictError('the key changed meanwhile (revoked?); nothing done');
  return { from: current.status, key: row };
}

/** The key, its organisation's state, looked up by the hash of the presented key. */
export interface AuthRecord {
  key: ApiKey;
  org: { id: string; name: string; status: 'active' | 'suspended' };
}

/**
 * One round trip: the key and its organisation by hash, and, for an active key of an
 * active organisation, last_used_at recorded (at most once a minute per key, so the hot
 * path rarely writes) in the same statement.
 */
export async function findKeyForAuth(db: Knex, plain: string): Promise<AuthRecord | null> {
  const hash = hashApiKey(plain);
  const columns = PUBLIC_COLUMNS.map((c) => `k.${c}`).join(', ');
  const { rows } = await db.raw<{ rows: Array<ApiKey & { key_hash: string; org_name: string; org_status: 'active' | 'suspended' }> }>(
    `with found as (
       select ${columns}, k.key_hash, o.name as org_name, o.status as org_status
       from api_keys k join organizations o on o.id = k.org_id
       where k.key_hash = ?
     ), touched as (
       update api_keys set last_used_at = now()
       where id in (select id from found where status = 'active' and org_status = 'active')
         and (last_used_at is null or last_used_at < now() - interval '1 minute')
     )
     select * from found`,
    [hash],
  );
  const row = rows[0];
  if (!row) return null;
  // The index lookup found it; compare the digests in constant time anyway so equality is never
  // decided by an early-exit string comparison in our own code.
  const a = Buffer.from(row.key_hash, 'hex');
  const b = Buffer.from(hash, 'hex');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
  const { key_hash: _h, org_name, org_status, ...key } = row;
  return { key, org: { id: key.org_id, name: org_name, status: org_status } };
}
