/** The checks /readyz runs: each dependency's plugin adds its own, in registration order. */
import fp from 'fastify-plugin';
import type { ReadinessCheck } from '../api/routes/operations.js';

export const readiness = fp(
  async (app) => {
    app.decorate('readiness', {} as Record<string, ReadinessCheck>);
  },
  { name: 'readiness', fastify: '5.x' },
);

declare module 'fastify' {
  interface FastifyInstance {
    readiness: Record<string, ReadinessCheck>;
  }
}
