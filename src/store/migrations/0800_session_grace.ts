/**
 * Console sessions (issue 29): a refresh token presented again within a short grace after
 * it was exchanged (two browser tabs refreshing at the same moment) gets the same new pair
 * instead of counting as reuse. The pair is kept on the spent token's row sealed with a key
 * derived from that token itself (HKDF of its plain text, which the database never holds),
 * so only someone presenting the token can open it. Cleared at the next exchange.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('console_tokens', (t) => {
    t.text('successor').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('console_tokens', (t) => {
    t.dropColumn('successor');
  });
}
