/** The console's audit log: who did what to which key, member or invitation of an organisation, when, from where. Takes a transaction to be written with the change. */
import type { Knex } from 'knex';

export interface AuditEntry {
  orgId: string;
  actor: { id: string | null; email: string };
  action: string;
  target: { type: 'key' | 'member' | 'invitation'; id: string; name?: string | null };
  details?: Record<string, unknown>;
  ip?: string | null;
}

export interface AuditRow {
  id: number;
  created_at: Date;
  actor: { id: string | null; email: string };
  action: string;
  target: { type: string; id: string; name: string | null };
  details: Record<string, unknown>;
  ip: string | null;
}

export async function writeAudit(db: Knex, e: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    org_id: e.orgId,
    actor_user_id: e.actor.id,
    actor_email: e.actor.email,
    action: e.action,
    target_type: e.target.type,
    target_id: e.target.id,
    target_name: e.target.name ?? null,
    details: JSON.stringify(e.details ?? {}),
    ip: e.ip ?? null,
  });
}

export async function listAudit(db: Knex, orgId: string, limit: number): Promise<AuditRow[]> {
  const rows = await db('audit_log').where({ org_id: orgId }).orderBy('id', 'desc').limit(limit);
  return rows.map((r: Record<string, unknown>) => ({
    id: Number(r.id),
    created_at: r.created_at as Date,
    actor: { id: (r.actor_user_id as string | null) ?? null, email: r.actor_email as string },
    action: r.action as string,
    target: { type: r.target_type as string, id: r.target_id as string, name: (r.target_name as string | null) ?? null },
    details: (r.details as Record<string, unknown>) ?? {},
    ip: (r.ip as string | null) ?? null,
  }));
}
