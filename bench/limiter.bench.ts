/**
 * Limiter cost per request: one rate check (the call every limited request makes), on
 * Redis (one Lua script round trip) and in-process, next to a bare Redis PING round trip,
 * the floor any Redis-backed check pays. Needs TEST_REDIS_URL or REDIS_URL; no database
 * is touched (checkRate does not use it).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLimits, type KeyLimits, type LimitsService } from '../src/limits/index.js';

const ITERATIONS = 5000;
const WARMUP = 500;

function stats(samplesNs: bigint[]): { median: number; p99: number } {
  const us = samplesNs.map((n) => Number(n) / 1000).sort((a, b) => a - b);
  const at = (q: number): number => us[Math.min(us.length - 1, Math.floor(q * us.length))];
  return { median: at(0.5), p99: at(0.99) };
}

/**
 * Sequential calls, one at a time, so each sample is one request's own cost. The
 * candidates take turns call by call, so a noisy neighbour on the machine weighs on all
 * of them alike.
 */
async function measure(fns: Array<(i: number) => Promise<unknown>>): Promise<Array<{ median: number; p99: number }>> {
  const samples: bigint[][] = fns.map(() => []);
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    for (let f = 0; f < fns.length; f++) {
      const t0 = process.hrtime.bigint();
      await fns[f](i);
      if (i >= WARMUP) samples[f].push(process.hrtime.bigint() - t0);
    }
  }
  return samples.map(stats);
}

function line(name: string, s: { median: number; p99: number }): void {
  process.stdout.write(`${name.padEnd(44)} median ${s.median.toFixed(1).padStart(7)} µs   p99 ${s.p99.toFixed(1).padStart(7)} µs\n`);
}

export async function run(): Promise<void> {
  const url = process.env.TEST_REDIS_URL || process.env.REDIS_URL;
  if (!url) {
    process.stdout.write('limiter: skipped (set TEST_REDIS_URL or REDIS_URL to a reachable Redis)\n');
    return;
  }
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    process.stdout.write(`limiter: skipped (no Redis reachable at ${url}: ${(err as Error).message})\n`);
    probe.disconnect();
    return;
  }

  const prefix = `bench:limits:${randomBytes(6).toString('hex')}:`;
  const config = { rateLimitPerMinute: 1_000_000, lookupRateLimitPerMinute: 1_000_000 };
  const silent = { warn: () => {}, info: () => {} };
  const redisLimits: LimitsService = await createLimits({ config, redisUrl: url, keyPrefix: prefix, logger: silent });
  const localLimits: LimitsService = await createLimits({ config, logger: silent });
  // Many keys, each limited high enough that every call is admitted (the common case).
  const keys: KeyLimits[] = Array.from({ length: 100 }, () => ({
    keyId: randomBytes(16).toString('hex'),
    orgId: 'bench',
    rateLimitPerMinute: null,
    monthlyQuota: 0,
  }));
  try {
    if (redisLimits.mode() !== 'redis') throw new Error('the Redis limiter did not connect');
    process.stdout.write(`${ITERATIONS} sequential calls each (after ${WARMUP} warm-up), Redis at ${new URL(url).host}\n`);
    const [ping, onRedis, inProcess] = await measure([
      () => probe.ping(),
      (i) => redisLimits.checkRate(keys[i % keys.length], 'recognition'),
      (i) => localLimits.checkRate(keys[i % keys.length], 'recognition'),
    ]);
    line('raw limit: bare Redis PING round trip', ping);
    line('checkRate on Redis (Lua sliding log)', onRedis);
    line('checkRate in-process (embedded/fallback)', inProcess);
    process.stdout.write(`Redis check over PING: median +${(onRedis.median - ping.median).toFixed(1)} µs\n`);
  } finally {
    const keysLeft = await probe.keys(`${prefix}*`);
    if (keysLeft.length > 0) await probe.del(...keysLeft);
    await redisLimits.close();
    await localLimits.close();
    probe.disconnect();
  }
}
