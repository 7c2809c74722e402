import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createDb, type Db } from '../../src/store/db.js';
import { MIGRATION_LOCK_KEY, migrateLatest, migrationStatus } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { eventually } from '../helpers/eventually.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

// Every replica migrates as it starts. These reproduce what several starting at once leave
// behind, and a migrator dying while others wait, against a real PostgreSQL.

let database: TestDatabase;
const pools: Db[] = [];
function pool(max = 2): Db {
  const db = createDb(database.url, { poolMax: max });
  pools.push(db);
  return db;
}

before(async () => {
  database = await createTestDatabase();
});
after(async () => {
  await Promise.all(pools.map((db) => db.destroy()));
  await database.drop();
});

/** A pool on the test database with every migration applied (each test stands alone). */
async function migratedPool(max = 2): Promise<Db> {
  const db = pool(max);
  await migrateLatest(db);
  return db;
}

async function lockRows(db: Db): Promise<number[]> {
  return ((await db('knex_migrations_lock').select('is_locked').orderBy('index')) as Array<{ is_locked: number }>).map((r) => r.is_locked);
}

test('replicas starting together on an empty database: one applies every migration, all succeed, one lock row', async () => {
  const results = await Promise.all(Array.from({ length: 4 }, () => migrateLatest(pool())));
  const all = migrations.map((m) => m.name);
  assert.deepEqual(results.find((r) => r.length > 0), all);
  assert.equal(results.filter((r) => r.length > 0).length, 1, 'exactly one replica applied them');
  assert.deepEqual(await lockRows(pool()), [0]);
  assert.deepEqual((await migrationStatus(pool())).pending, []);
});

test('a lock table doubled by two unguarded first runs is reset, not fatal', async () => {
  const db = await migratedPool();
  // knex alone inserts its lock row after a check; two first runs at once both insert one,
  // and from then on every run of knex's migrator fails "Migration table is already locked".
  await db('knex_migrations_lock').insert({ is_locked: 0 });
  assert.equal((await lockRows(db)).length, 2);
  await assert.rejects(db.migrate.latest({ tableName: 'knex_migrations', migrationSource: withOneMore }), /already locked/);
  const warnings: string[] = [];
  assert.deepEqual(await migrateLatest(db, { warn: (m) => warnings.push(m) }), []);
  assert.deepEqual(await lockRows(db), [0]);
  assert.match(warnings.join('\n'), /reset knex_migrations_lock/);
});

test('a lock row left set (a run without a transaction, or by hand) is reset by the next start', async () => {
  const db = await migratedPool(1);
  await db('knex_migrations_lock').update({ is_locked: 1 });
  const warnings: string[] = [];
  assert.deepEqual(await migrateLatest(db, { warn: (m) => warnings.push(m) }), []);
  assert.deepEqual(await lockRows(db), [0]);
  assert.equal(warnings.length, 1);
  // Up to date and tidy: no warning the next time.
  assert.deepEqual(await migrateLatest(db, { warn: (m) => warnings.push(m) }), []);
  assert.equal(warnings.length, 1);
});

test('a migrator waits while another holds the migration lock, and goes on when that one dies', async () => {
  await migratedPool();
  // A replica mid-migration: a session holding the key every migrator takes.
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  const holderPid = ((await holder.query('select pg_backend_pid() as pid')).rows[0] as { pid: number }).pid;
  holder.on('error', () => {}); // it is about to be killed
  await holder.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);

  let finished = false;
  const waiting = migrateLatest(pool()).finally(() => (finished = true));
  const db = pool();
  await eventually(
    async () =>
      (
        (await db.raw(
          "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())",
        )).rows[0] as { n: number }
      ).n === 1,
    { what: 'the second migrator waiting on the advisory lock' },
  );
  assert.equal(finished, false);

  // The holder dies without a word (as a killed pod's connection does); the server drops its lock.
  await db.raw('select pg_terminate_backend(?)', [holderPid]);
  assert.deepEqual(await waiting, []);
  await holder.end().catch(() => {});
});

/** The service's migrations and one more, so that knex's migrator has something to lock for. */
const withOneMore = {
  getMigrations: async () => [...migrations.map((m) => m.name), 'zz_pending'],
  getMigrationName: (name: string) => name,
  getMigration: async () => ({ up: async () => {}, down: async () => {} }),
};
