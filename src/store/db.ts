/**
 * The knex instance over node-postgres. Repositories receive it; nothing else opens
 * connections. Driver errors propagate; the API answers them as internal errors.
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// bigint columns (organisations' balance) come back as numbers; balances stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));

export type Db = Knex;

export interface DbOptions {
  /** Pool size; small by default because every replica keeps its own pool. */
  poolMax?: number;
  applicationName?: string;
  /** Where the driver's warnings go (a dropped connection, a failed acquire); default: stderr, as knex does. */
  warn?: (msg: string) => void;
}

export function createDb(url: string, options: DbOptions = {}): Db {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: options.applicationName ?? 'recognition-service' },
    pool: { min: 0, max: options.poolMax ?? 10 },
    acquireConnectionTimeout: 10_000,
    ...(options.warn && { log: { warn: options.warn, error: options.warn, deprecate: () => {}, debug: () => {} } }),
  });
}

/** Cheap liveness query for readiness checks. */
export async function pingDb(db: Db): Promise<{ ok: boolean; detail?: string }> {
  try {
    await db.raw('select 1');
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: `database: ${(err as Error).message}` };
  }
}

/** True for PostgreSQL's unique_violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === '23505';
}

/** A named row does not exist (an organisation, a key). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The change is not allowed in the row's current state (a revoked key, a duplicate name). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** Ids are UUIDs (src/recognition/ids.ts); re-exported for the repositories and their callers. */
export { isUuid } from '../recognition/ids.js';
