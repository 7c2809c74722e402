/**
 * Protection against slow and greedy clients at the HTTP layer: the server's timeouts
 * (headers, whole request, keep-alive idle, socket inactivity) and connection cap come from
 * the configuration, and one client address may keep only so many requests in flight.
 * A slow client is cut by Node's HTTP server without ever reaching a route.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { ApiError } from './errors.js';

export type ConnectionConfig = Pick<
  Config,
  'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'httpSocketTimeoutMs' | 'httpMaxConnections' | 'httpMaxInFlightPerClient' | 'trustProxy'
>;

/** Fastify (and node:http) options for the configured timeouts. */
export function serverTimeoutOptions(c: ConnectionConfig): Partial<FastifyServerOptions> {
  return {
    connectionTimeout: c.httpSocketTimeoutMs,
    keepAliveTimeout: c.httpKeepAliveTimeoutMs,
    requestTimeout: c.httpRequestTimeoutMs,
    trustProxy: c.trustProxy,
    http: {
      headersTimeout: c.httpHeadersTimeoutMs,
      requestTimeout: c.httpRequestTimeoutMs,
      keepAliveTimeout: c.httpKeepAliveTimeoutMs,
      // Node checks headers/request timeouts on this period (30 s by default): a quarter of
      // the headers timeout keeps the cut close to the configured value.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(c.httpHeadersTimeoutMs / 4))),
    },
  } as Partial<FastifyServerOptions>;
}

/** The connection cap and the per-address in-flight cap. */
export function installConnectionLimits(app: FastifyInstance, c: ConnectionConfig, onRefused?: () => void): void {
  app.server.maxConnections = c.httpMaxConnections;
  if (c.httpMaxInFlightPerClient <= 0) return;
  const inFlight = new Map<string, number>();
  app.addHook('onRequest', async (request, reply) => {
    const ip = request.ip;
    const n = inFlight.get(ip) ?? 0;
    if (n >= c.httpMaxInFlightPerClient) {
      onRefused?.();
      throw new ApiError('TOO_MANY_IN_FLIGHT', `At most ${c.httpMaxInFlightPerClient} requests from one client address may be in flight`, {}, { 'Retry-After': '1' });
    }
    inFlight.set(ip, n + 1);
    // 'close' fires once whether the response finished or the client went away.
    reply.raw.once('close', () => {
      const left = (inFlight.get(ip) ?? 1) - 1;
      if (left <= 0) inFlight.delete(ip);
      else inFlight.set(ip, left);
    });
  });
}
