/**
 * Slow and greedy clients against the real server on a real socket: a client that sends
 * its headers one byte at a time, one that sends its body one byte at a time, and one that
 * connects and says nothing are all cut by the server, while a normal client is served
 * meanwhile. The connection cap and the per-address in-flight cap refuse the excess.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

/** Longest a test waits for the server to cut a socket before calling it a failure. */
const SAFETY_MS = 30_000;

interface Drip {
  /** Resolves when the server closed the socket; `bytesSent` is how far the client got. */
  closed: Promise<{ bytesSent: number; received: string }>;
  stop(): void;
}

/** Connects and sends `prefix` at once, then `drip` one byte every `everyMs` (nothing if empty), endlessly repeated. */
function dripClient(port: number, prefix: string, drip: string, everyMs = 100): Drip {
  const socket = net.connect(port, '127.0.0.1');
  let sent = 0;
  let received = '';
  let timer: NodeJS.Timeout | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  socket.on('connect', () => {
    if (prefix) socket.write(prefix, () => (sent += prefix.length));
    if (drip) {
      let i = 0;
      timer = setInterval(() => {
        if (socket.destroyed || socket.writableEnded) return;
        socket.write(drip[i++ % drip.length]);
        sent++;
      }, everyMs);
    }
  });
  const closed = new Promise<{ bytesSent: number; received: string }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ bytesSent: sent, received });
    });
  });
  return {
    closed,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: the server did not cut it within ${ms} ms`)), ms);
    }),
  ]);
}

async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as AddressInfo).port;
}

test('slow headers, a slow body and an idle socket are cut; a normal client is served meanwhile', async () => {
  const t = await buildTestApp({
    HTTP_HEADERS_TIMEOUT_MS: '1000',
    HTTP_REQUEST_TIMEOUT_MS: '2000',
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    HTTP_MAX_IN_FLIGHT_PER_CLIENT: '0',
  });
  const slow: Drip[] = [];
  try {
    const port = await listen(t);
    const k = await t.newKey();
    // Headers that never end: a long header value, one byte at a time.
    const headers = dripClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a');
    // Complete headers, a body of 100000 bytes announced, sent one byte at a time.
    const body = dripClient(
      port,
      `POST /v1/cv/requests/sync HTTP/1.1\r\nHost: x\r\nx-api-key: ${k.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"external_id":"slow","image_url":"`,
      'a',
    );
    // Connects and never sends a byte.
    const idle = dripClient(port, '', '');
    slow.push(headers, body, idle);

    // Meanwhile a normal client keeps being served, on fresh connections each time.
    let served = 0;
    const normal = (async () => {
      const stop = Promise.all([headers.closed, body.closed, idle.closed]);
      let done = false;
      void stop.then(() => (done = true));
      while (!done) {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } });
        assert.equal(res.status, 200);
        await res.text();
        served++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    const [h, b, i] = await within(Promise.all([headers.closed, body.closed, idle.closed]), SAFETY_MS, 'slow clients');
    await normal;
    // Cut before they finished: the header drip never completed a request, the body drip
    // sent far fewer than the 100000 bytes it announced; neither got a 200.
    assert.doesNotMatch(h.received, /HTTP\/1\.1 200/);
    assert.doesNotMatch(b.received, /HTTP\/1\.1 200/);
    assert.ok(b.bytesSent < 100_000, `the body drip was cut (sent ${b.bytesSent})`);
    assert.equal(i.bytesSent, 0);
    assert.ok(served >= 3, `the normal client was served while the slow ones hung on (${served} answers)`);
    // Still serving after the cuts.
    const after = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(after.status, 200);
    // No request record was left behind by the cut upload.
    const rows = await t.db('requests').where({ key_id: k.id }).count<{ count: string }[]>('* as count');
    assert.equal(Number(rows[0].count), 0);
  } finally {
    for (const s of slow) s.stop();
    await t.close();
  }
});

test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
  const t = await buildTestApp({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '500' });
  try {
    const port = await listen(t);
    const c = dripClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '');
    const { received } = await within(c.closed, SAFETY_MS, 'idle keep-alive connection');
    assert.match(received, /^HTTP\/1\.1 200/);
    assert.match(received, /Keep-Alive: timeout=/i);
  } finally {
    await t.close();
  }
});

test('one client address gets at most HTTP_MAX_IN_FLIGHT_PER_CLIENT requests in flight: the next is 429 TOO_MANY_IN_FLIGHT', async () => {
  const t = await buildTestApp({ HTTP_MAX_IN_FLIGHT_PER_CLIENT: '2', HTTP_REQUEST_TIMEOUT_MS: '60000' });
  const held: Drip[] = [];
  try {
    const port = await listen(t);
    const k = await t.newKey();
    // Two uploads whose headers arrived (in flight) but whose bodies never finish.
    const start = `POST /v1/cv/feedback HTTP/1.1\r\nHost: x\r\nx-api-key: ${k.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`;
    held.push(dripClient(port, start, ''), dripClient(port, start, ''));
    // Wait until the server has seen both (a third request is refused only then).
    const third = await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.status === 429) return res;
        await res.text();
      },
      { what: 'a third concurrent request from the same address refused', intervalMs: 50 },
    );
    assert.equal(third.headers.get('retry-after'), '1');
    const body = (await third.json()) as { error_code: string; error: string };
    assert.equal(body.error_code, 'TOO_MANY_IN_FLIGHT');
    assert.equal(body.error, 'Too Many Requests');
    // Once they go away, the address is served again.
    for (const h of held) h.stop();
    await Promise.all(held.map((h) => h.closed));
    await eventually(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        await res.text();
        return res.status === 200;
      },
      { what: 'served again after the held requests ended', intervalMs: 50 },
    );
  } finally {
    for (const h of held) h.stop();
    await t.close();
  }
});

test('the connection cap closes connections beyond HTTP_MAX_CONNECTIONS', async () => {
  const t = await buildTestApp({ HTTP_MAX_CONNECTIONS: '3', HTTP_HEADERS_TIMEOUT_MS: '60000', HTTP_REQUEST_TIMEOUT_MS: '60000' });
  const idle: Drip[] = [];
  try {
    const port = await listen(t);
    for (let n = 0; n < 3; n++) idle.push(dripClient(port, '', ''));
    await eventually(
      async () => (await new Promise<number>((resolve, reject) => t.app.server.getConnections((err, c) => (err ? reject(err) : resolve(c))))) === 3,
      { what: 'the server counting all three connections', intervalMs: 20 },
    );
    const extra = dripClient(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', '');
    const { received } = await within(extra.closed, SAFETY_MS, 'the connection over the cap');
    assert.equal(received, '', 'the connection over the cap got no answer');
    idle[0].stop();
    await idle[0].closed;
    await eventually(
      async () => {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } });
        await r.text();
        return r.status === 200;
      },
      { what: 'served once a connection slot was free', intervalMs: 50 },
    );
  } finally {
    for (const s of idle) s.stop();
    await t.close();
  }
});
