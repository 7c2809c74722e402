/**
 * Temporary passwords (issue 29): a password chosen by someone other than the account's owner
 * (an operator's `recog users create` or `recog users set-password`) must be replaced at the
 * first sign-in. While the flag is set, a session can only read /me, change the password and
 * sign out (src/console/session-auth.ts).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('password_must_change').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('password_must_change');
  });
}
