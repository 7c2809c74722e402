/**
 * GET /metrics on its own port (METRICS_PORT), so Prometheus can scrape a port that is not
 * exposed to API clients. A bare node:http server: nothing else is served there.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: Metrics, options: { port: number; host?: string }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    metrics.render().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.contentType() });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`metrics collection failed: ${err.message}\n`),
    );
  });
  server.keepAliveTimeout = 65_000; // longer than Prometheus' scrape interval: connections are reused
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
