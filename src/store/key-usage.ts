/** Monthly quota usage per key (table key_usage, charged by recognition_admit). */
import type { Knex } from 'knex';
import { withDbRetry } from './db-faults.js';

/** Units a key has used in the UTC month of `at` (for `recog keys show` and the like). */
export async function readMonthlyUsage(knex: Knex, keyId: string, at: Date = new Date()): Promise<number> {
  const month = at.toISOString().slice(0, 7);
  const row = await withDbRetry(() => knex('key_usage').where({ key_id: keyId, month }).first<{ used: number } | undefined>('used'), { idempotent: true });
  return row === undefined ? 0 : Number(row.used);
}
