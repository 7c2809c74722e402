/**
 * The rate limiter (Redis, or in-process without REDIS_URL). A limiter passed in is the
 * caller's to close; otherwise the plugin opens one and closes it with the app.
 */
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { createLimits, type Limits, type LimitsLogger } from '../limits/index.js';
import { watchLimiter } from '../telemetry/instrument.js';
import type { Metrics } from '../telemetry/metrics.js';

export interface LimitsOptions {
  config: Readonly<Config>;
  metrics: Metrics;
  limits?: Limits;
  /** Default: the app's logger. */
  log?: LimitsLogger;
}

export const limits = fp<LimitsOptions>(
  async (app, opts) => {
    let limiter = opts.limits;
    if (limiter === undefined) {
      const opened = await createLimits({ config: opts.config, redisUrl: opts.config.redisUrl, logger: opts.log ?? app.log });
      const unwatch = watchLimiter(opened, opts.metrics);
      app.addHook('onClose', async () => {
        unwatch();
        await opened.close();
      });
      limiter = opened;
    }
    app.decorate('limits', limiter);
    app.readiness.limits = () => limiter.ready();
  },
  { name: 'limits', fastify: '5.x', dependencies: ['readiness'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    limits: Limits;
  }
}
