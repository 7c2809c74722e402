/**
 * The audit log records security events too (issue 29): sign-ins, failed and throttled
 * sign-ins, sign-outs, password changes, session revocations and refresh-token reuse.
 * Those belong to an account, not to an organisation: `org_id` becomes nullable and
 * `user_id` names the account an entry concerns (its security log). A failed sign-in for an
 * e-mail without an account has neither; operators read those (`recog audit list`).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table audit_log alter column org_id drop not null');
  await knex.schema.alterTable('audit_log', (t) => {
    // the account the entry concerns; its security log. Kept after the account goes (the e-mail is in actor_email / target_name).
    t.uuid('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.index(['user_id', 'id']);
    t.index(['action', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('audit_log').whereNull('org_id').delete();
  await knex.schema.alterTable('audit_log', (t) => {
    t.dropIndex(['action', 'id']);
    t.dropIndex(['user_id', 'id']);
    t.dropColumn('user_id');
  });
  await knex.raw('alter table audit_log alter column org_id set not null');
}
