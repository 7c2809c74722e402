/**
 * Organisations, API keys, recognition requests and feedback (current rating + history).
 * Names of organizations and api_keys are relied on by src/limits.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('organizations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('status').notNullable().defaultTo('active');
    // null = unlimited; never negative (the limiter debits with a guarded update)
    t.bigInteger('balance').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`status in ('active','suspended')`, [], 'organizations_status_check');
    t.check('balance is null or balance >= 0', [], 'organizations_balance_check');
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('org_id').notNullable().references('id').inTable('organizations').onDelete('RESTRICT');
    t.text('prefix').notNullable();
    // hex SHA-256 of the whole key: keys carry 256 bits of entropy, so no salt/KDF is needed
    t.text('key_hash').notNullable().unique();
    t.text('name').notNullable();
    t.text('description').nullable();
    t.text('status').notNullable().defaultTo('active');
    t.jsonb('classes').notNullable().defaultTo(knex.raw(`'["*"]'::jsonb`));
    t.integer('monthly_quota').notNullable();
    t.integer('rate_limit_per_minute').nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.index(['org_id']);
    t.check(`status in ('active','suspended','revoked')`, [], 'api_keys_status_check');
    t.check('monthly_quota >= 0', [], 'api_keys_quota_check');
    t.check('rate_limit_per_minute is null or rate_limit_per_minute > 0', [], 'api_keys_rate_check');
  });

  await knex.schema.createTable('requests', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.uuid('org_id').notNullable().references('id').inTable('organizations').onDelete('RESTRICT');
    t.text('kind').notNullable();
    // sync: the idempotency id; batch: the batch's tracking id (null when the client gave none)
    t.text('external_id').nullable();
    t.text('status').notNullable().defaultTo('QUEUED');
    t.text('source').notNullable();
    t.text('source_url').nullable();
    // what "the same image" means for idempotency: url:<url> or sha256:<hex of the bytes>
    t.text('image_fingerprint').notNullable();
    t.boolean('image_stored').notNullable().defaultTo(false);
    t.jsonb('results').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.text('error').nullable();
    t.integer('response_code').nullable();
    t.text('model_name').nullable();
    t.text('model_version').nullable();
    t.integer('processing_time_ms').nullable();
    // which process runs it, so a shutting-down replica can close only its own work
    t.text('instance_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.index(['key_id', 'created_at']);
    t.check(`kind in ('sync','batch')`, [], 'requests_kind_check');
    t.check(`status in ('QUEUED','PROCESSING','DONE','ERROR')`, [], 'requests_status_check');
    t.check(`source in ('url','base64')`, [], 'requests_source_check');
  });
  // Idempotency across replicas: at most one live (not ERROR) sync request per (key, external_id).
  await knex.raw(
    `create unique index requests_idempotency_idx on requests (key_id, external_id) where kind = 'sync' and status <> 'ERROR'`,
  );
  await knex.raw(`create index requests_unfinished_idx on requests (created_at) where status in ('QUEUED','PROCESSING')`);

  await knex.schema.createTable('feedback', (t) => {
    t.uuid('request_id').primary().references('id').inTable('requests').onDelete('CASCADE');
    t.uuid('key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.smallint('rating').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('rating in (-1, 0, 1)', [], 'feedback_rating_check');
  });
  await knex.schema.createTable('feedback_history', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('request_id').notNullable().references('id').inTable('requests').onDelete('CASCADE');
    t.uuid('key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.smallint('rating').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['request_id', 'id']);
    t.check('rating in (-1, 0, 1)', [], 'feedback_history_rating_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('feedback_history');
  await knex.schema.dropTableIfExists('feedback');
  await knex.schema.dropTableIfExists('requests');
  await knex.schema.dropTableIfExists('api_keys');
  await knex.schema.dropTableIfExists('organizations');
}
