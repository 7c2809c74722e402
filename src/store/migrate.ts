/** Runs the versioned migrations of ./migrations/index.ts through knex's migrator. */
import type { Knex } from 'knex';
import pg from 'pg';
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
const LOCK_TABLE = `${TABLE}_lock`;
/** The advisory-lock key every migrator of this service takes (any fixed bigint; this one spells nothing). */
export const MIGRATION_LOCK_KEY = '4711200931';

/**
 * Applies every pending migration; returns the names applied now (empty when up to date).
 *
 * Every replica migrates as it starts, so several run this at once. knex's own lock is a row
 * it does not defend: two first runs on an empty database can each insert a lock row, after
 * which every run fails with "Migration table is already locked" (a row left set by a run
 * without a transaction, or by hand, does the same). So each caller first takes a
 * PostgreSQL session advisory lock on a connection of its own; others wait for it, and the
 * server drops it when that connection ends, however the holder died. Holding it, no other
 * migrator of ours is running, so a lock table in any state but one free row is left over
 * and is reset.
 */
export async function migrateLatest(db: Knex, opts: { warn?: (msg: string) => void } = {}): Promise<string[]> {
  // As long as the pool waits for a connection (createDb's acquireConnectionTimeout).
  const lock = new pg.Client({ ...connectionOf(db), connectionTimeoutMillis: 10_000 });
  // Losing this session (a server restart, a proxy cutting it) loses the exclusion: said,
  // and never a crash of the process.
  lock.on('error', (err) => opts.warn?.(`the migration lock's session ended: ${err.message}`));
  try {
    await lock.connect();
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (await lockTableIsLeftOver(db)) {
      opts.warn?.(`reset ${LOCK_TABLE}, left locked or with more than one row by an earlier migrator`);
      // One transaction: knex code outside our lock (an older replica, `db.migrate.list`)
      // never sees the table empty, which would make it insert a row of its own.
      await db.transaction(async (trx) => {
        await trx(LOCK_TABLE).del();
        await trx(LOCK_TABLE).insert({ is_locked: 0 });
      });
    }
    const [, applied] = (await db.migrate.latest({ migrationSource: new ListMigrationSource(migrations), tableName: TABLE })) as [number, string[]];
    return applied;
  } finally {
    // Ending the session releases the advisory lock.
    await lock.end();
  }
}

/** True when knex's lock table exists and is not exactly one unlocked row. */
async function lockTableIsLeftOver(db: Knex): Promise<boolean> {
  if (!(await db.schema.hasTable(LOCK_TABLE))) return false;
  const rows = await db<{ is_locked: number }>(LOCK_TABLE).select('is_locked');
  return rows.length !== 1 || rows[0]?.is_locked !== 0;
}

/** The connection settings of knex's pool, for a session outside it (the pool may be as small as one). */
function connectionOf(db: Knex): pg.ClientConfig {
  const { connection } = (db.client as { config: Knex.Config }).config;
  if (typeof connection === 'string') return { connectionString: connection };
  if (connection && typeof connection === 'object') return connection as pg.ClientConfig;
  throw new Error('migrations need the database connection settings as an object or URL');
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
