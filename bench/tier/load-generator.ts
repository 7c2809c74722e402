/**
 * The tier bench's load generator, a process of its own (forked by bench/tier.bench.ts), so
 * the front end measured carries only its own work. It sends `POST /v1/cv/requests/sync`
 * with `{"external_id", "image_base64"}` bodies from `callers` concurrent callers, each
 * taking the next photo of the set in turn, so every photo is sent equally often.
 *
 * Messages: {type: 'target', url, key?} sets where to send; {type: 'run', ms} sends for
 * that long (callers finish the request they are in, so every counted request is complete
 * and none is left in flight) and answers {count, seconds, cpuMs, perPhoto, error}.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

interface Setup {
  photos: string[];
  callers: number;
}
type Message = ({ type: 'setup' } & Setup) | { type: 'target'; url: string; key?: string } | { type: 'run'; ms: number };

export interface RoundResult {
  count: number;
  seconds: number;
  /** This process's CPU in the round, ms. */
  cpuMs: number;
  /** Requests done per photo (index of the set). */
  perPhoto: number[];
  error: string | null;
}

let images: Buffer[] = [];
let callers = 4;
let target: { url: URL; key?: string } | undefined;
let agent = new http.Agent({ keepAlive: true });
let seq = 0;
let next = 0;
const tail = Buffer.from('}');

/**
 * One request: the photo's base64 made once, copied with a new head into one Buffer per
 * call (off the JavaScript heap), which costs the generator far less than a new string.
 */
function post(photo: number): Promise<{ status: number; body: string }> {
  const t = target as { url: URL; key?: string };
  const head = Buffer.from(`{"external_id":"tier-${process.pid}-${++seq}","image_base64":`);
  const image = images[photo];
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': head.length + image.length + tail.length };
  if (t.key !== undefined) headers['x-api-key'] = t.key;
  return new Promise((resolve, reject) => {
    const req = http.request(t.url, { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(Buffer.concat([head, image, tail]));
  });
}

async function round(ms: number): Promise<RoundResult> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  const perPhoto = images.map(() => 0);
  let count = 0;
  let error: string | null = null;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end && error === null) {
        const photo = next++ % images.length;
        try {
          const res = await post(photo);
          const status = res.status === 200 ? (JSON.parse(res.body) as { status?: string }).status : undefined;
          if (res.status !== 200 || status !== 'DONE') error = `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
          else {
            count++;
            perPhoto[photo]++;
          }
        } catch (err) {
          error = String(err);
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { count, seconds: (performance.now() - start) / 1000, cpuMs: (cpu.user + cpu.system) / 1000, perPhoto, error };
}

process.on('message', (m: Message) => {
  if (m.type === 'setup') {
    // JSON string bodies: the base64 text in quotes, as any client library writes it.
    images = m.photos.map((file) => Buffer.from(JSON.stringify(readFileSync(file).toString('base64'))));
    callers = m.callers;
    process.send?.({ type: 'ready' });
  } else if (m.type === 'target') {
    agent.destroy();
    agent = new http.Agent({ keepAlive: true, maxSockets: callers });
    target = { url: new URL(m.url), key: m.key };
    process.send?.({ type: 'ready' });
  } else {
    void round(m.ms).then((r) => process.send?.({ type: 'round', ...r }));
  }
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});
