/**
 * Image retention (src/store/image-retention.ts): when the sweep deleted a request's stored
 * image. The request and its result stay; its image link answers 410 from then on.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('requests', (t) => {
    t.timestamp('image_deleted_at', { useTz: true }).nullable();
  });
  // The sweep's candidates only: stored images not yet removed, oldest first.
  await knex.raw(`CREATE INDEX requests_image_retention_idx ON requests (created_at) WHERE image_stored AND image_deleted_at IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS requests_image_retention_idx');
  await knex.schema.alterTable('requests', (t) => {
    t.dropColumn('image_deleted_at');
  });
}
