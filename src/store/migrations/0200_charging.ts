/**
 * What each request was charged and whether it was given back, on its own row: the month
 * its unit of quota was counted in (NULL: not charged) and when it was refunded (NULL: not).
 * The refund is taken by the same statement that ends the request, guarded by
 * `refunded_at IS NULL`, so it happens exactly once whichever replica ends it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('requests', (t) => {
    t.string('charge_month', 7).nullable();
    t.timestamp('refunded_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('requests', (t) => {
    t.dropColumn('charge_month');
    t.dropColumn('refunded_at');
  });
}
