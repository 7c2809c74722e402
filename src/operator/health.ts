/** The operator's probe and metrics endpoints: /healthz, /readyz, /metrics. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  /** Process alive and its loops turning. */
  live: () => boolean;
  /** Caches synced; a standby that is not leader is still ready (it can take over). */
  ready: () => boolean;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(host: string, port: number, checks: HealthChecks, registry: Registry): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (ok: boolean) => {
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' });
      res.end(ok ? 'ok\n' : 'not ready\n');
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
    } else if (path === '/healthz') {
      answer(checks.live());
    } else if (path === '/readyz') {
      answer(checks.ready());
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        },
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
