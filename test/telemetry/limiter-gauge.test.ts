/**
 * limiter_degraded follows the real limiter: Redis reached through a loopback TCP relay that
 * the test cuts and restores (the real Redis keeps running for the other tests).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type { Knex } from 'knex';
import { createLimits, type LimitsService } from '../../src/limits/index.js';
import { createDb } from '../../src/store/db.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { watchLimiter } from '../../src/telemetry/instrument.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { eventually } from '../helpers/eventually.js';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../helpers/services.js';

const config = { rateLimitPerMinute: 10, lookupRateLimitPerMinute: 600 };
const quiet = { warn: () => {}, info: () => {} };
let database: TestDatabase;
let db: Knex;

before(async () => {
  database = await createTestDatabase();
  db = createDb(database.url);
  await migrateLatest(db);
});
after(async () => {
  await db?.destroy();
  await database?.drop();
});

/** A TCP relay to Redis on a fixed loopback port that can be cut (sockets destroyed, port closed) and restored. */
async function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const open = async () => {
    server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  };
  const cut = async () => {
    await new Promise<void>((r) => {
      server!.close(() => r());
      for (const s of sockets) s.destroy();
    });
  };
  await open();
  return { url: () => `redis://127.0.0.1:${port}`, cut, restore: open };
}

async function gauge(m: Metrics): Promise<number> {
  const line = (await m.render()).split('\n').find((l) => l.startsWith('limiter_degraded '));
  return Number(line?.split(' ')[1]);
}

test('limiter_degraded: 0 with Redis, 1 when the connection is cut, 0 again after it comes back', async () => {
  const link = await relay(new URL(TEST_REDIS_URL));
  const metrics = new Metrics({ defaultMetrics: false });
  const limits: LimitsService = await createLimits({ config, redisUrl: link.url(), logger: quiet, keyPrefix: `telemetry-${process.pid}:` });
  const unwatch = watchLimiter(limits, metrics);
  try {
    assert.equal(limits.mode(), 'redis');
    assert.equal(await gauge(metrics), 0);
    await link.cut();
    await eventually(async () => (await gauge(metrics)) === 1, { what: 'the gauge at 1 after the cut' });
    assert.equal(limits.mode(), 'degraded');
    await link.restore();
    await eventually(async () => (await gauge(metrics)) === 0, { what: 'the gauge back at 0 once the relay is back' });
    assert.equal(limits.mode(), 'redis');
  } finally {
    unwatch();
    await limits.close();
    await link.cut().catch(() => {});
  }
});

test('a limiter that starts without Redis reports degraded at once; one without Redis configured is not degraded', async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  const down = await createLimits({ config, redisUrl: 'redis://127.0.0.1:1', logger: quiet, redisConnectWaitMs: 200 });
  const unwatch = watchLimiter(down, metrics);
  assert.equal(await gauge(metrics), 1);
  unwatch();
  await down.close();

  const embedded = await createLimits({ config, logger: quiet });
  watchLimiter(embedded, metrics)();
  assert.equal(await gauge(metrics), 0);
  await embedded.close();
});
