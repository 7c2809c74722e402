/**
 * `recog db migrate`, and the plumbing every database command shares: open the configured
 * database (DATABASE_URL, or the embedded one under DATA_DIR, joining it when the service
 * already runs it), bring the schema up to date, run, close; print text or --json.
 */
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { loadConfig, type Config } from '../../config.js';
import { openDatabase } from '../../store/embedded.js';
import { migrateLatest, migrationStatus } from '../../store/migrate.js';

export interface Output {
  json: boolean;
  write(text: string): void;
}

export function stdoutOutput(json: boolean): Output {
  return { json, write: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`) };
}

/** Prints `data` as JSON with --json, else the human text. */
export function emit(out: Output, data: unknown, text: () => string): void {
  out.write(out.json ? JSON.stringify(data, null, 2) : text());
}

/** The CLI's own notices; stdout keeps the command's output. */
function toStderr(msg: string): void {
  process.stderr.write(`recog: ${msg}\n`);
}

/** Opens the database of `config`, migrates it, runs `fn`, closes (stopping an embedded server this process started). */
export async function withDatabase<T>(config: Readonly<Config>, fn: (db: Knex) => Promise<T>): Promise<T> {
  const handle = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: 2,
    applicationName: 'recog-cli',
    role: 'cli',
    log: toStderr,
  });
  try {
    await migrateLatest(handle.db, { warn: toStderr });
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

export interface MigrateResult {
  applied: string[];
  current: string[];
}

export async function dbMigrate(db: Knex): Promise<MigrateResult> {
  const applied = await migrateLatest(db, { warn: toStderr });
  const status = await migrationStatus(db);
  return { applied, current: status.applied };
}

export function register(program: Command): void {
  const db = program.command('db').description('The service database (PostgreSQL at DATABASE_URL, or the embedded one under DATA_DIR)');
  db.command('migrate')
    .description('Apply pending schema migrations (the service also does this at start)')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig();
      const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2, applicationName: 'recog-cli', role: 'cli' });
      try {
        const result = await dbMigrate(handle.db);
        emit(stdoutOutput(Boolean(opts.json)), result, () =>
          result.applied.length === 0
            ? `schema up to date (${result.current.length} migrations)`
            : `applied: ${result.applied.join(', ')}`,
        );
      } finally {
        await handle.close();
      }
    });
}
