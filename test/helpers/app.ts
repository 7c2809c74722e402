/**
 * Builds the real app (real model, real limits, real image intake) against a fresh test
 * database and a temporary DATA_DIR. One helper for every API test; close() after.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Knex } from 'knex';
import { buildApp, createServices, type AppDeps, type Services } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDb } from '../../src/store/db.js';
import { createKey, type KeyStatus } from '../../src/store/keys.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { REPO_ROOT } from './fixtures.js';
import { createTestDatabase, type TestDatabase } from './services.js';

export interface TestKey {
  key: string;
  id: string;
  orgId: string;
  orgName: string;
}

export interface NewKeyOptions {
  /** Reuse an organisation (by id); default: a new one. */
  orgId?: string;
  balance?: number | null;
  classes?: string[];
  quota?: number;
  /** Default 1000 so tests are not throttled unless they mean to be. */
  rateLimit?: number | null;
  expiresAt?: Date | null;
  status?: KeyStatus;
}

export interface TestApp {
  app: FastifyInstance;
  db: Knex;
  config: Readonly<Config>;
  services: Services;
  database: TestDatabase;
  dataDir: string;
  newKey(options?: NewKeyOptions): Promise<TestKey>;
  close(): Promise<void>;
}

let orgCounter = 0;

/** The test configuration: loopback image servers allowed, quiet logs, `env` on top. */
export function testConfig(databaseUrl: string, dataDir: string, env: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'),
    IMAGE_FETCH_ALLOW_CIDRS: '127.0.0.0/8',
    IMAGE_URL_SECRET: 'test-secret-for-signed-image-urls',
    PUBLIC_BASE_URL: 'http://cv.test',
    LOG_LEVEL: 'silent',
    INFERENCE_THREADS: '1',
    ...env,
  });
}

export async function buildTestApp(
  env: Record<string, string> = {},
  options: {
    sweepAbandoned?: boolean;
    sweepImages?: boolean;
    console?: AppDeps['console'];
    /** Another replica's database (not dropped by this app's close). */
    shareDatabase?: TestDatabase;
  } = {},
): Promise<TestApp> {
  const owned = options.shareDatabase === undefined;
  const database = options.shareDatabase ?? (await createTestDatabase());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-app-'));
  await chmod(dataDir, 0o755);
  const config = testConfig(database.url, dataDir, env);
  const db = createDb(database.url);
  let services: Services | undefined;
  try {
    await migrateLatest(db);
    services = await createServices(config, db, { warn: () => {}, info: () => {} });
    const app = await buildApp({ ...services, console: options.console }, { logger: false, sweepAbandoned: options.sweepAbandoned, sweepImages: options.sweepImages ?? false });
    await app.ready();
    const svc = services;
    return {
      app,
      db,
      config,
      services: svc,
      database,
      dataDir,
      async newKey(o: NewKeyOptions = {}): Promise<TestKey> {
        let orgId = o.orgId;
        let orgName = '';
        if (orgId === undefined) {
          const org = await createOrg(db, { name: `org-${process.pid}-${++orgCounter}`, balance: o.balance ?? null });
          orgId = org.id;
          orgName = org.name;
        }
        const { key, record } = await createKey(db, {
          orgId,
          name: 'test key',
          classes: o.classes ?? ['*'],
          monthlyQuota: o.quota ?? 10_000,
          rateLimitPerMinute: o.rateLimit === undefined ? 1000 : o.rateLimit,
          expiresAt: o.expiresAt ?? null,
        });
        if (o.status !== undefined && o.status !== 'active') await db('api_keys').where({ id: record.id }).update({ status: o.status });
        return { key, id: record.id, orgId, orgName };
      },
      async close() {
        await app.close();
        await svc.close();
        await db.destroy();
        if (owned) await database.drop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await services?.close();
    await db.destroy();
    if (owned) await database.drop();
    throw err;
  }
}

/** JSON body of an inject() response. */
export function json<T = Record<string, unknown>>(res: { body: string }): T {
  return JSON.parse(res.body) as T;
}
