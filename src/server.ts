/**
 * The process: configuration, logger, database (embedded when DATABASE_URL is unset),
 * migrations, the app, listen, signals and graceful shutdown. `npm start` runs the
 * compiled form of this file; `recog serve` calls runServer().
 */
// First: refuses a Node.js too old for the service before anything else loads.
import './supported-node.js';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp, instanceIdFor } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './store/embedded.js';
import { migrateLatest } from './store/migrate.js';
import { closeInstanceRequests } from './store/requests.js';
import { loggerOptions } from './telemetry/logging.js';
import { Metrics } from './telemetry/metrics.js';
import { startMetricsServer } from './telemetry/metrics-server.js';
import { startTracing } from './telemetry/tracing.js';
import { withTimeout } from './deadline.js';

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  instanceId: string;
  /** Stops accepting, lets in-flight work finish within config.shutdownTimeoutMs, closes pools. */
  shutdown(reason?: string): Promise<{ drained: boolean }>;
}

/** Starts everything and listens; does not install signal handlers (see main). */
export async function startServer(config: Readonly<Config>, logger = pino(loggerOptions(config.logLevel))): Promise<RunningServer> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    log: (msg) => logger.info(msg),
    warn: (msg) => logger.warn({ component: 'database' }, String(msg)),
  });
  let built: FastifyInstance | undefined;
  try {
    const applied = await migrateLatest(database.db, { warn: (msg) => logger.warn({ component: 'database' }, msg) });
    if (applied.length > 0) logger.info({ applied }, 'database migrated');
    const instanceId = instanceIdFor(config);
    const metrics = new Metrics();
    // The app opens the limiter, the inference backend and the image store, and closes them.
    const app = (built = await buildApp({ config, db: database.db, instanceId, metrics }, { loggerInstance: logger }));
    await app.listen({ port: config.port, host: config.host });
    // A scrape-only port (METRICS_PORT), up until the drain has ended so the drain is visible.
    const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics, { port: config.metricsPort, host: config.host });
    let closing: Promise<{ drained: boolean }> | undefined;
    return {
      app,
      database,
      instanceId,
      shutdown(reason = 'shutdown') {
        closing ??= gracefulShutdown({ app, database, instanceId, timeoutMs: config.shutdownTimeoutMs, log: logger, reason }).finally(() => metricsServer?.close());
        return closing;
      },
    };
  } catch (err) {
    await built?.close().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
}

/**
 * Graceful shutdown: stop accepting (new calls get 503), wait for in-flight requests up to
 * `timeoutMs`, then close pools. Past the bound, this process's unfinished requests are
 * marked ERROR before the pools close, so none stays PROCESSING.
 */
export async function gracefulShutdown(opts: {
  app: FastifyInstance;
  database: DatabaseHandle;
  instanceId: string;
  timeoutMs: number;
  log: pino.Logger;
  reason: string;
}): Promise<{ drained: boolean }> {
  const { app, database, log } = opts;
  log.info({ reason: opts.reason, timeoutMs: opts.timeoutMs }, 'shutting down: draining in-flight requests');
  // The app's onClose hooks close its clients once the HTTP server has closed.
  const closing = app.close().catch((err: unknown) => log.error({ err }, 'closing the app failed'));
  const first = await withTimeout(closing.then(() => 'closed' as const), opts.timeoutMs, () => 'timeout' as const);
  const drained = first === 'closed';
  if (!drained) {
    log.warn('drain bound passed: ending unfinished requests and closing connections');
    app.server.closeAllConnections();
    const n = await closeInstanceRequests(database.db, opts.instanceId).catch(() => 0);
    if (n > 0) log.warn({ count: n }, 'marked interrupted requests ERROR');
    // With no connection left the server closes and the onClose hooks run; bounded all the same.
    await withTimeout(closing, opts.timeoutMs, () => log.error('the app did not close; closing the database anyway'));
  }
  await database.close().catch((err: unknown) => log.error({ err }, 'closing the database failed'));
  log.info({ drained }, 'stopped');
  return { drained };
}

/**
 * Runs until SIGTERM/SIGINT, shuts down gracefully, then exits the process (with 0 when it
 * drained): once everything is closed and flushed, nothing left open may delay the exit.
 */
export async function runServer(config: Readonly<Config>): Promise<never> {
  const logger = pino(loggerOptions(config.logLevel));
  // Standard OTEL_* variables switch on OTLP trace export; without them tracing costs nothing.
  const tracing = await startTracing(process.env);
  if (tracing.enabled) logger.info('OpenTelemetry tracing on (OTLP)');
  const server = await startServer(config, logger);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      server.shutdown(signal).then(
        async ({ drained }) => {
          await tracing.shutdown().catch(() => {}); // flushes the last spans
          process.exitCode = drained ? 0 : 1;
          // Everything is closed; whatever still holds the event loop open (a client's
          // reconnect timer, a pooled socket) is a leak the exit below hides. Named here, so
          // it can be found and closed at source.
          // (stdout and stderr count as PipeWrap or TTYWrap once written to; they hold nothing.)
          const holding = process.getActiveResourcesInfo().filter((r) => r !== 'PipeWrap' && r !== 'TTYWrap');
          if (holding.length > 0) logger.warn({ holding }, 'exiting with handles still open');
          resolve();
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exitCode = 1;
          resolve();
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  process.exit();
}

async function main(): Promise<void> {
  let config: Readonly<Config>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  try {
    await runServer(config);
  } catch (err) {
    process.stderr.write(`recognition-service failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
