/**
 * Shared set-up for the limits tests: a fresh database with every migration, keys and
 * organisations made through the store, a unique Redis key prefix per test, private
 * redis-server processes for the stop/restart/FLUSHALL tests, and the two limiter
 * implementations the same suite runs against.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createDb, type Db } from '../../src/store/db.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { createKey } from '../../src/store/keys.js';
import { createLimits, type CreateLimitsOptions, type LimitsService, type KeyLimits } from '../../src/limits/index.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/local-server.js';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../helpers/services.js';

export const CONFIG = { rateLimitPerMinute: 10, lookupRateLimitPerMinute: 600 };

/** The implementations every shared test runs against. */
export const BACKENDS: Array<{ name: 'redis' | 'embedded'; redisUrl?: string }> = [
  { name: 'redis', redisUrl: TEST_REDIS_URL },
  { name: 'embedded' },
];

export interface TestDb {
  db: Db;
  url: string;
  close(): Promise<void>;
}

export async function openTestDb(): Promise<TestDb> {
  const tdb: TestDatabase = await createTestDatabase();
  const db = createDb(tdb.url, { poolMax: 20, applicationName: 'limits-test' });
  await migrateLatest(db);
  return {
    db,
    url: tdb.url,
    async close() {
      await db.destroy();
      await tdb.drop();
    },
  };
}

export function uniquePrefix(): string {
  return `test:limits:${randomBytes(6).toString('hex')}:`;
}

/** An organisation (optional balance) and one key on it, as the limiter sees the key. */
export async function makeKey(
  db: Db,
  opts: { quota?: number; rate?: number | null; balance?: number | null } = {},
): Promise<KeyLimits> {
  const org = await createOrg(db, { name: `org-${randomBytes(5).toString('hex')}`, balance: opts.balance ?? null });
  const { record } = await createKey(db, {
    orgId: org.id,
    name: 'limits test',
    monthlyQuota: opts.quota ?? 10_000,
    rateLimitPerMinute: opts.rate ?? null,
  });
  return { keyId: record.id, orgId: org.id, rateLimitPerMinute: opts.rate ?? null, monthlyQuota: opts.quota ?? 10_000 };
}

export const quietLogger = { warn: () => {}, info: () => {} };

/** Prefixes handed out on the shared Redis, dropped by `dropUsedPrefixes` after the file. */
const usedPrefixes: string[] = [];

/** A limiter with a unique Redis key prefix (unless `extra.keyPrefix` shares one between instances). */
export function limitsFor(
  db: Db,
  redisUrl: string | undefined,
  extra: Partial<CreateLimitsOptions> = {},
): Promise<LimitsService> {
  const keyPrefix = extra.keyPrefix ?? uniquePrefix();
  usedPrefixes.push(keyPrefix);
  return createLimits({ config: CONFIG, redisUrl, logger: quietLogger, ...extra, keyPrefix });
}

export async function dropUsedPrefixes(): Promise<void> {
  for (const p of usedPrefixes.splice(0)) await dropPrefix(TEST_REDIS_URL, p);
}

/** Deletes every key under a prefix on the shared Redis (never anything else). */
export async function dropPrefix(redisUrl: string, prefix: string): Promise<void> {
  const r = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await r.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

export function count<T>(items: T[], pred: (t: T) => boolean): number {
  return items.filter(pred).length;
}

/** A private redis-server on loopback, for tests that stop, restart or flush Redis. */
export class PrivateRedis {
  private proc?: ChildProcess;
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.proc = proc;
    await eventually(
      async () => {
        const c = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
        c.on('error', () => {});
        try {
          await c.connect();
          return (await c.ping()) === 'PONG';
        } finally {
          c.disconnect();
        }
      },
      { what: `redis-server answering on port ${this.port}`, intervalMs: 50 },
    );
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc === undefined || proc.exitCode !== null) return;
    this.proc = undefined;
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
  }

  /** SIGSTOP: the server hangs with its connections open (a stuck primary). */
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  async flushAll(): Promise<void> {
    const c = new Redis(this.url);
    try {
      await c.flushall();
    } finally {
      c.disconnect();
    }
  }

  async keys(pattern: string): Promise<string[]> {
    const c = new Redis(this.url);
    try {
      return await c.keys(pattern);
    } finally {
      c.disconnect();
    }
  }
}
