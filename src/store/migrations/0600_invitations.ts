/**
 * Invitations to an organisation (issue 29): adding a member no longer creates an account
 * with a password someone else chose. An invitation is a one-time link whose 256-bit random
 * token is stored only as its SHA-256 digest; the invitee sets their own password (a new
 * account) or accepts as the existing account, once, before it expires.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_invitations', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('token_hash').notNullable().unique();
    t.uuid('org_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    // as typed by the inviting admin; matched to accounts on lower(email)
    t.text('email').notNullable();
    t.text('role').notNullable();
    // null: an operator with the recog CLI; the e-mail stays as it was at the time
    t.uuid('invited_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('invited_by_email').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('accepted_at', { useTz: true }).nullable();
    t.uuid('accepted_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.index(['org_id']);
    t.check(`role in ('owner','admin','member','viewer')`, [], 'console_invitations_role_check');
  });
  await knex.raw('create index console_invitations_org_email_idx on console_invitations (org_id, lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('console_invitations');
}
