/**
 * Counts recognition calls the limits refused (rate limit, monthly quota, balance) per key
 * and day, for the console's usage chart. Not encapsulated: its hook sees the public routes.
 * Refusals before a key is known (missing, wrong, suspended key) have no key to count on.
 */
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import { recordRefusal } from '../store/console-usage.js';

const COUNTED_ROUTES = new Set(['/v1/cv/requests/sync', '/v1/cv/requests/batch']);
const LIMIT_STATUSES = new Set([402, 429]);

const plugin: FastifyPluginAsync<{ db: Knex }> = async (app, { db }) => {
  app.addHook('onResponse', async (request, reply) => {
    if (!request.caller || !LIMIT_STATUSES.has(reply.statusCode) || !COUNTED_ROUTES.has(request.routeOptions.url ?? '')) return;
    await recordRefusal(db, request.caller.keyId).catch((err: unknown) => request.log.warn({ err }, 'could not count a refused call'));
  });
};

export const refusalCounter = fp(plugin, { name: 'console-refusal-counter' });
