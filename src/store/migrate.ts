/** Runs the versioned migrations of ./migrations/index.ts through knex's migrator. */
import type { Knex } from 'knex';
import { migrations, type Migration } from './migrations/index.js';

class ListMigrationSource implements Knex.MigrationSource<Migration> {
  constructor(private readonly list: Migration[]) {}
  async getMigrations(): Promise<Migration[]> {
    return this.list;
  }
  getMigrationName(m: Migration): string {
    return m.name;
  }
  async getMigration(m: Migration): Promise<Knex.Migration> {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- knex calls up/down as plain functions
    return { up: m.up, down: m.down };
  }
}

const TABLE = 'knex_migrations';

/** Applies every pending migration; returns the names applied now (empty when up to date). */
export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: new ListMigrationSource(migrations), tableName: TABLE })) as [number, string[]];
  return applied;
}

/** Names of applied and pending migrations. */
export async function migrationStatus(db: Knex): Promise<{ applied: string[]; pending: string[] }> {
  const [done, pending] = (await db.migrate.list({ migrationSource: new ListMigrationSource(migrations), tableName: TABLE })) as [
    Array<{ name: string } | string>,
    Migration[],
  ];
  return {
    applied: done.map((d) => (typeof d === 'string' ? d : d.name)),
    pending: pending.map((p) => p.name),
  };
}
