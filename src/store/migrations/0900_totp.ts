/**
 * Second factor (issue 29): a TOTP secret per user (active once confirmed), its single-use
 * recovery codes (SHA-256 digests), the short-lived challenges between a right password and
 * the code, when each session last passed a second-factor check, and organisations that
 * require a second factor of their members.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_totp', (t) => {
    t.uuid('user_id').primary().references('id').inTable('users').onDelete('CASCADE');
    // base32; stored as is (see docs/security.md, "TOTP secrets at rest")
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // null: enrollment started, not confirmed with a code yet (not active)
    t.timestamp('confirmed_at', { useTz: true }).nullable();
    // the step of the last accepted code: a code is never accepted twice
    t.bigInteger('last_step').nullable();
  });
  await knex.schema.createTable('user_recovery_codes', (t) => {
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('code_hash').notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.primary(['user_id', 'code_hash']);
  });
  await knex.schema.createTable('mfa_challenges', (t) => {
    t.text('token_hash').primary();
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.text('user_agent').nullable();
    t.index(['user_id']);
  });
  await knex.schema.alterTable('console_sessions', (t) => {
    t.timestamp('mfa_verified_at', { useTz: true }).nullable();
  });
  await knex.schema.alterTable('organizations', (t) => {
    t.boolean('mfa_required').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.dropColumn('mfa_required');
  });
  await knex.schema.alterTable('console_sessions', (t) => {
    t.dropColumn('mfa_verified_at');
  });
  await knex.schema.dropTableIfExists('mfa_challenges');
  await knex.schema.dropTableIfExists('user_recovery_codes');
  await knex.schema.dropTableIfExists('user_totp');
}
