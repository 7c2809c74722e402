/**
 * The background sweeps, started when the app is ready and stopped at close: requests
 * abandoned past their deadline end ERROR, and images past IMAGE_RETENTION_DAYS are deleted.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { sweepExpiredImages } from '../store/image-retention.js';
import { failAbandonedRequests } from '../store/requests.js';

/**
 * No request runs past its deadline (sync limit) while its process lives: at the deadline the
 * process ends it itself. The margin covers that last write and its retries (db-faults.ts);
 * past it, nobody will finish the request.
 */
const ABANDON_MARGIN_MS = 10_000;
function abandonedAfterMs(config: Pick<Config, 'syncTimeoutMs'>): number {
  return config.syncTimeoutMs + ABANDON_MARGIN_MS;
}

/** How often the sweep runs: the longest a request can stay unfinished is abandonedAfterMs plus this. */
const SWEEP_INTERVAL_MS = 5_000;

export interface SweepsOptions {
  config: Readonly<Config>;
  instanceId: string;
  /** Sweep abandoned QUEUED/PROCESSING requests at start and every `sweepIntervalMs` (default on). */
  sweepAbandoned?: boolean;
  sweepIntervalMs?: number;
  /** Delete images past IMAGE_RETENTION_DAYS at start and every `retentionIntervalMs` (default on, hourly). */
  sweepImages?: boolean;
  retentionIntervalMs?: number;
}

/** Runs `first` then `every` each `ms` from onReady until onClose; the timer does not hold the process. */
function repeat(app: FastifyInstance, ms: number, every: () => void, first: () => Promise<void> = async () => every()): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await first();
    timer = setInterval(every, ms);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}

export const sweeps = fp<SweepsOptions>(
  async (app, { config, instanceId, ...opts }) => {
    const { db } = app;
    if (opts.sweepAbandoned ?? true) {
      const sweep = async () => {
        const n = await failAbandonedRequests(db, abandonedAfterMs(config));
        if (n > 0) app.log.warn({ count: n }, 'marked abandoned requests ERROR');
      };
      const run = () => void sweep().catch((err: unknown) => app.log.error({ err }, 'abandoned-request sweep failed'));
      repeat(app, opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS, run, async () => {
        // A restart under the same stable instance id (same host and port) cannot have live work:
        // whatever that id left unfinished was abandoned by the previous run, however recent.
        const previous = await failAbandonedRequests(db, 0, instanceId);
        if (previous > 0) app.log.warn({ count: previous }, 'marked requests of the previous run ERROR');
        await sweep();
      });
    }
    if ((opts.sweepImages ?? true) && config.imageRetentionDays > 0) {
      // Every replica runs it; an advisory lock lets one delete while the others skip.
      const sweep = async () => {
        const r = await sweepExpiredImages(db, app.images.store, config.imageRetentionDays);
        if (r.deleted > 0 || r.failed > 0) app.log.info({ deleted: r.deleted, failed: r.failed, retentionDays: config.imageRetentionDays }, 'image retention sweep');
      };
      repeat(app, opts.retentionIntervalMs ?? 3_600_000, () => void sweep().catch((err: unknown) => app.log.error({ err }, 'image retention sweep failed')));
    }
  },
  { name: 'sweeps', fastify: '5.x', dependencies: ['database', 'image-store'] },
);
