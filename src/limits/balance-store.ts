/**
 * The organisation's optional call balance (organizations.balance; NULL = unlimited).
 * One conditional UPDATE per debit: PostgreSQL's row lock makes concurrent debits
 * queue, and the WHERE clause is re-checked on the latest row, so it never goes below zero.
 */
import type { Knex } from 'knex';
import { withDbRetry } from '../store/db-faults.js';

export class BalanceStore {
  constructor(private readonly knex: Knex) {}

  /** True when debited (or unlimited); false when short or the organisation is unknown. */
  async debit(orgId: string, units: number): Promise<boolean> {
    if (units === 0) return true;
    const { rowCount } = await withDbRetry(() => this.knex.raw<{ rowCount: number }>(
      `UPDATE organizations SET balance = balance - ?
       WHERE id = ? AND (balance IS NULL OR balance >= ?)`,
      [units, orgId, units],
    ), { kind: 'write' });
    return rowCount === 1;
  }

  /** Gives units back; an unlimited balance stays unlimited. */
  async refund(orgId: string, units: number): Promise<void> {
    if (units === 0) return;
    await withDbRetry(() => this.knex.raw(`UPDATE organizations SET balance = balance + ? WHERE id = ? AND balance IS NOT NULL`, [units, orgId]), { kind: 'write' });
  }
}
