/**
 * PostgreSQL. The pool is the caller's (it opens it and migrates before the app exists, and
 * closes it last); the plugin adds what the app does with it: metrics and spans per query,
 * detached on close, and the readiness check.
 */
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import { pingDb } from '../store/db.js';
import { instrumentKnex } from '../telemetry/instrument.js';
import type { Metrics } from '../telemetry/metrics.js';

export interface DatabaseOptions {
  db: Knex;
  metrics: Metrics;
}

export const database = fp<DatabaseOptions>(
  async (app, { db, metrics }) => {
    app.decorate('db', db);
    const detach = instrumentKnex(db, metrics);
    app.addHook('onClose', async () => detach());
    app.readiness.database = () => pingDb(db);
  },
  { name: 'database', fastify: '5.x', dependencies: ['readiness'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    db: Knex;
  }
}
