/**
 * Small HTTP servers on loopback for the client's tests: each records what reached it
 * (method, path, headers, body) and answers from a handler, so a test can show that a
 * credential did, or did not, arrive somewhere.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RecordingServer {
  /** http://127.0.0.1:<port> */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export async function recordingServer(answer: (req: Received) => Answer = () => ({ status: 404, body: { error: 'not_found', error_code: 'NOT_FOUND', message: 'no' } })): Promise<RecordingServer> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(r);
      const a = answer(r);
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body === undefined ? '' : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** A server that answers every request with a redirect to `target` + the same path. */
export function redirectingServer(target: () => string, status = 302): Promise<RecordingServer> {
  return recordingServer((req) => ({ status, headers: { location: `${target()}${req.url}` } }));
}

/** The console API's answer to a login or a refresh. */
export const tokenAnswer = (n: number) => ({
  access_token: `access-${n}`,
  access_expires_in: 900,
  refresh_token: `refresh-${n}`,
  refresh_expires_in: 86_400,
  user: { id: 'u1', email: 'dana@example.com' },
});

export const REQUEST_ID = '3b52482a-6374-42ae-bbb7-f3d901ac7aa9';
export const DONE = { success: true, request_id: REQUEST_ID, external_id: 'e1', status: 'DONE', results: [] };

/** A stand-in for the service: GET /v1/cv/requests/:id, login, refresh and /me. */
export function fakeService(): Promise<RecordingServer> {
  let issued = 0;
  return recordingServer((req) => {
    if (req.url.startsWith('/v1/cv/requests/')) return { status: 200, body: DONE };
    if (req.url === '/console/api/v1/auth/login' || req.url === '/console/api/v1/auth/refresh') return { status: 200, body: tokenAnswer(++issued) };
    if (req.url === '/console/api/v1/me') return { status: 200, body: { user: { id: 'u1', email: 'dana@example.com' }, memberships: [] } };
    return { status: 404, body: { error: 'not_found', error_code: 'NOT_FOUND', message: 'no' } };
  });
}
