/**
 * The console (src/console): people, their memberships in organisations, sessions with
 * rotating refresh tokens, login throttling counters, the audit log, and daily counts of
 * refused recognition calls (DONE/ERROR per day come from `requests` itself).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // kept as typed; uniqueness and lookups are on lower(email)
    t.text('email').notNullable();
    // scrypt$N$r$p$salt$hash (src/console/passwords.ts)
    t.text('password_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('password_changed_at', { useTz: true }).nullable();
  });
  await knex.raw('create unique index users_email_lower_idx on users (lower(email))');

  await knex.schema.createTable('memberships', (t) => {
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('org_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('role').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'org_id']);
    t.index(['org_id']);
    t.check(`role in ('owner','admin','member','viewer')`, [], 'memberships_role_check');
  });

  // One row per sign-in: the "family" every rotated refresh token and access token belongs to.
  await knex.schema.createTable('console_sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // absolute end: rotation never extends a session past it
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.text('revoked_reason').nullable();
    t.text('user_agent').nullable();
    t.text('ip').nullable();
    t.index(['user_id']);
  });

  // Tokens are 256-bit random strings stored only as SHA-256 hex digests.
  await knex.schema.createTable('console_tokens', (t) => {
    t.text('token_hash').primary();
    t.uuid('session_id').notNullable().references('id').inTable('console_sessions').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    // refresh tokens: set when exchanged; presenting a spent one revokes the session
    t.timestamp('used_at', { useTz: true }).nullable();
    t.index(['session_id']);
    t.check(`kind in ('access','refresh')`, [], 'console_tokens_kind_check');
  });

  // Failed sign-ins per subject ('account:<email>' or 'address:<ip>') in the current window.
  await knex.schema.createTable('login_throttle', (t) => {
    t.text('subject').primary();
    t.integer('failures').notNullable().defaultTo(0);
    t.timestamp('window_started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('locked_until', { useTz: true }).nullable();
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('org_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    // kept when the user is deleted: the e-mail stays as it was at the time
    t.uuid('actor_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('actor_email').notNullable();
    t.text('action').notNullable();
    t.text('target_type').notNullable();
    t.text('target_id').notNullable();
    t.text('target_name').nullable();
    t.jsonb('details').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.text('ip').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'id']);
  });

  // Calls refused by the limits (rate, quota, balance) per key and UTC day.
  await knex.schema.createTable('key_refusals_daily', (t) => {
    t.uuid('key_id').notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    t.date('day').notNullable();
    t.integer('refused').notNullable().defaultTo(0);
    t.primary(['key_id', 'day']);
  });
  // Usage charts read a key's requests by day.
  await knex.raw('create index if not exists requests_org_created_idx on requests (org_id, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists requests_org_created_idx');
  for (const t of ['key_refusals_daily', 'audit_log', 'login_throttle', 'console_tokens', 'console_sessions', 'memberships', 'users']) {
    await knex.schema.dropTableIfExists(t);
  }
}
