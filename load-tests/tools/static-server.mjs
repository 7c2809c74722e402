// A tiny static file server on loopback for URL-mode images during load runs. Serves the
// files of one directory by bare name (no subpaths, so nothing outside it is reachable),
// answers 404 for anything else, and prints its port on stdout once listening.
// `?delay_ms=N` holds the answer back N ms (at most 120 s): an image host that stalls, for
// the workload's 408 (the service's sync deadline passes while it is still downloading).
//   node load-tests/tools/static-server.mjs <dir> [port (0 = any free)] [host (127.0.0.1)]
import { createServer } from 'node:http';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';

const [dir, portArg = '0', host = '127.0.0.1'] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: static-server.mjs <dir> [port] [host]\n');
  process.exit(2);
}

const TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif' };

// Read once: a load test must measure the API, not this server's disk.
const files = new Map();
for (const name of readdirSync(dir)) {
  const full = path.join(dir, name);
  if (statSync(full).isFile()) files.set(name, { body: readFileSync(full), type: TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream' });
}

const server = createServer((req, res) => {
  const name = decodeURIComponent((req.url ?? '/').split('?')[0].replace(/^\/+/, ''));
  const file = (req.method === 'GET' || req.method === 'HEAD') && !name.includes('/') ? files.get(name) : undefined;
  if (!file) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    return;
  }
  const send = () => {
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  };
  const delay = Math.min(120_000, Math.max(0, Number(new URL(req.url ?? '/', 'http://x').searchParams.get('delay_ms')) || 0));
  if (delay === 0) return send();
  const timer = setTimeout(send, delay);
  // The service gave up (its deadline): stop waiting for nobody.
  res.on('close', () => clearTimeout(timer));
});
server.keepAliveTimeout = 30_000;
server.listen(Number(portArg), host, () => {
  process.stdout.write(`${server.address().port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
