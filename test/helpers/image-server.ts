/**
 * The one local HTTP(S) server tests use to serve images and misbehave on purpose. Listens on
 * loopback (127.0.0.1 unless told otherwise), counts accepted TCP connections (to prove that a
 * refused URL never connected), and records every request.
 *
 * Routes (GET):
 *   /images/<fixture>          a shared fixture (basketball1.png, camera.png, squirrel_cls.jpg)
 *   /status/<code>             that HTTP status with a short text body
 *   /slow?ms=N                 waits N ms (default 60 s) before answering with an image
 *   /trickle?ms=N              sends a PNG signature, then one byte every N ms (default 100), forever
 *   /huge?bytes=N&declare=1    a PNG signature then zeros, N bytes in all (default 256 MiB), written
 *                              with backpressure; `declare=1` sends Content-Length. See `huge`.
 *   /text                      an HTML page (not an image)
 *   /redirect?n=N&to=T&code=C  redirects N times (to itself with n-1), then to T (default
 *                              /images/camera.png; may be absolute), with status C (default 302)
 *   /no-location               302 without a Location header
 *   /empty                     200 with an empty body
 */
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { readFixture } from './fixtures.js';

export const FIXTURE_NAMES = ['basketball1.png', 'camera.png', 'squirrel_cls.jpg'] as const;
type FixtureName = (typeof FIXTURE_NAMES)[number];

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHUNK = Buffer.alloc(64 * 1024);

/** Waits for backpressure to clear, or for the client to go away (whichever first, no leftover listeners). */
function drainOrClose(res: http.ServerResponse): Promise<'drain' | 'close'> {
  return new Promise((resolve) => {
    const onDrain = () => done('drain');
    const onClose = () => done('close');
    const done = (event: 'drain' | 'close') => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(event);
    };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** TLS only: the SNI name the client sent. */
  servername?: string;
}

export interface ImageServer {
  /** e.g. http://127.0.0.1:43210 */
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  /** origin + path */
  url(path: string): string;
  /** TCP connections accepted since start (or the last reset). */
  readonly connections: number;
  readonly requests: readonly RecordedRequest[];
  /** The last /huge response: bytes written to the socket and whether it ended early. */
  readonly huge: { bytesWritten: number; total: number; closedEarly: boolean; done: Promise<void> } | undefined;
  reset(): void;
  close(): Promise<void>;
}

export interface ImageServerOptions {
  /** Loopback address to listen on (127.0.0.1 by default; 127.0.0.2 or ::1 also work on Linux). */
  host?: string;
  /** Port to listen on (0, the default, picks a free one); lets two loopback addresses share a port. */
  port?: number;
  /** Serve https with this key and certificate. */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

export async function startImageServer(options: ImageServerOptions = {}): Promise<ImageServer> {
  const host = options.host ?? '127.0.0.1';
  let connections = 0;
  let requests: RecordedRequest[] = [];
  let huge: ImageServer['huge'];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const servername = (req.socket as TLSSocket).servername || undefined;
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, servername });
    const q = (name: string, fallback: number) => {
      const v = url.searchParams.get(name);
      return v === null ? fallback : Number(v);
    };
    const sendFixture = (name: FixtureName) => {
      const bytes = readFixture(name);
      res.writeHead(200, { 'content-type': name.endsWith('.png') ? 'image/png' : 'image/jpeg', 'content-length': bytes.length });
      res.end(bytes);
    };

    const [, first, second] = url.pathname.split('/');
    switch (first) {
      case 'images': {
        if ((FIXTURE_NAMES as readonly string[]).includes(second)) return sendFixture(second as FixtureName);
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such image');
        return;
      }
      case 'status': {
        const code = Number(second);
        res.writeHead(Number.isInteger(code) && code >= 200 && code <= 599 ? code : 400, { 'content-type': 'text/plain' });
        res.end(`status ${second}`);
        return;
      }
      case 'slow': {
        const t = later(q('ms', 60_000), () => sendFixture('camera.png'));
        res.on('close', () => {
          clearTimeout(t);
          timers.delete(t);
        });
        return;
      }
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(PNG_SIGNATURE);
        const every = q('ms', 100);
        const tick = () => {
          if (res.destroyed || res.writableEnded) return;
          res.write(Buffer.from([0]));
          later(every, tick);
        };
        later(every, tick);
        return;
      }
      case 'huge': {
        const total = q('bytes', 256 * 1024 * 1024);
        const headers: http.OutgoingHttpHeaders = { 'content-type': 'image/png' };
        if (url.searchParams.get('declare') === '1') headers['content-length'] = total;
        res.writeHead(200, headers);
        const state = { bytesWritten: 0, total, closedEarly: false, done: Promise.resolve() };
        huge = state;
        state.done = (async () => {
          const write = (chunk: Buffer) => {
            state.bytesWritten += chunk.length;
            return res.write(chunk);
          };
          write(PNG_SIGNATURE.subarray(0, Math.min(total, PNG_SIGNATURE.length)));
          while (state.bytesWritten < total) {
            if (res.destroyed) break;
            const n = Math.min(CHUNK.length, total - state.bytesWritten);
            if (!write(CHUNK.subarray(0, n))) {
              if ((await drainOrClose(res)) === 'close') break;
            }
          }
          state.closedEarly = state.bytesWritten < total || res.destroyed;
          if (!res.destroyed) res.end();
        })();
        return;
      }
      case 'text': {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>not an image</title><p>hello</p>');
        return;
      }
      case 'redirect': {
        const n = q('n', 1);
        const to = url.searchParams.get('to') ?? '/images/camera.png';
        const code = q('code', 302);
        const next = n > 1 ? `/redirect?n=${n - 1}&to=${encodeURIComponent(to)}&code=${code}` : to;
        res.writeHead(code, { location: next }).end();
        return;
      }
      case 'no-location': {
        res.writeHead(302).end();
        return;
      }
      case 'empty': {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': 0 }).end();
        return;
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  };

  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(options.port ?? 0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const scheme = options.tls ? 'https' : 'http';
  const origin = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    origin,
    host,
    port,
    url: (path: string) => origin + path,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    get huge() {
      return huge;
    },
    reset() {
      connections = 0;
      requests = [];
      huge = undefined;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
