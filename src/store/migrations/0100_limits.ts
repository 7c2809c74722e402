/**
 * Monthly quota usage per API key and UTC month, the source of truth that admission's
 * conditional upsert works on (0500_admission). One row per key and month, so the
 * upsert's row lock serialises exactly the calls that compete for one quota.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('key_usage', (t) => {
    t.uuid('key_id').notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    // 'YYYY-MM' of the UTC calendar month.
    t.string('month', 7).notNullable();
    t.integer('used').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['key_id', 'month']);
  });
  await knex.raw(`ALTER TABLE key_usage ADD CONSTRAINT key_usage_used_non_negative CHECK (used >= 0)`);
  await knex.raw(`ALTER TABLE key_usage ADD CONSTRAINT key_usage_month_format CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('key_usage');
}
