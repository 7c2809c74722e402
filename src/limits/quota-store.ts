/**
 * Monthly quota usage in PostgreSQL, the source of truth. Each reservation is one
 * conditional upsert: PostgreSQL locks the (key, month) row and re-checks
 * `used + units <= quota` on its latest version, so concurrent reservations from any
 * number of replicas admit exactly what fits, with or without Redis in front.
 */
import type { Knex } from 'knex';
import { withDbRetry } from '../store/db-faults.js';

export const KEY_USAGE_TABLE = 'key_usage';

export interface UsageResult {
  allowed: boolean;
  /** Usage after the reservation, or the current usage when refused. */
  used: number;
}

export class QuotaStore {
  constructor(private readonly knex: Knex) {}

  async reserve(keyId: string, month: string, units: number, quota: number): Promise<UsageResult> {
    // A first reservation bigger than the whole quota would be inserted unchecked.
    if (units > quota) return { allowed: false, used: await this.used(keyId, month) };
    // Retried only when the statement certainly did not apply (a second upsert would count twice).
    const { rows } = await withDbRetry(() => this.knex.raw<{ rows: Array<{ used: number }> }>(
      `INSERT INTO ${KEY_USAGE_TABLE} AS u (key_id, month, used) VALUES (?, ?, ?)
       ON CONFLICT (key_id, month) DO UPDATE SET used = u.used + EXCLUDED.used, updated_at = now()
       WHERE u.used + EXCLUDED.used <= ?
       RETURNING used`,
      [keyId, month, units, quota],
    ), { kind: 'write' });
    if (rows.length === 1) return { allowed: true, used: Number(rows[0].used) };
    return { allowed: false, used: await this.used(keyId, month) };
  }

  /** Gives units back, never below zero. Returns the usage after. */
  async release(keyId: string, month: string, units: number): Promise<number> {
    const { rows } = await withDbRetry(() => this.knex.raw<{ rows: Array<{ used: number }> }>(
      `UPDATE ${KEY_USAGE_TABLE} SET used = GREATEST(used - ?, 0), updated_at = now()
       WHERE key_id = ? AND month = ? RETURNING used`,
      [units, keyId, month],
    ), { kind: 'write' });
    return rows.length === 1 ? Number(rows[0].used) : 0;
  }

  async used(keyId: string, month: string): Promise<number> {
    const row = await withDbRetry(() => this.knex(KEY_USAGE_TABLE).where({ key_id: keyId, month }).first<{ used: number } | undefined>('used'), { kind: 'read' });
    return row === undefined ? 0 : Number(row.used);
  }
}

/** Units a key has used in the UTC month of `at` (for `recog keys show` and the like). */
export async function readMonthlyUsage(knex: Knex, keyId: string, at: Date = new Date()): Promise<number> {
  return new QuotaStore(knex).used(keyId, at.toISOString().slice(0, 7));
}
