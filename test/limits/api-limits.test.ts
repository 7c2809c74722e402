/**
 * The limits seen through the real API (real model, PostgreSQL, Redis, HTTP on loopback):
 * 30 parallel sync calls of one key → exactly 10 processed and 20 × 429 RATE_LIMITED,
 * in one process and split across two API processes sharing PostgreSQL and Redis; and
 * quota 5 with 12 parallel calls → exactly 5 processed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { buildTestApp, type NewKeyOptions, type TestApp } from '../helpers/app.js';
import { dropPrefix } from './harness.js';
import { TEST_REDIS_URL } from '../helpers/services.js';
import { readFixture } from '../helpers/fixtures.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const IMAGE = readFixture('squirrel_cls.jpg').toString('base64');

let t: TestApp;
let base: string;
before(async () => {
  t = await buildTestApp({ REDIS_URL: TEST_REDIS_URL }, { sweepAbandoned: false });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
const keyIds: string[] = [];
after(async () => {
  // The API runs with the default prefix: drop only the state of this file's own keys.
  for (const id of keyIds) {
    await dropPrefix(TEST_REDIS_URL, `recog:limits:rate:recognition:${id}`);
    await dropPrefix(TEST_REDIS_URL, `recog:limits:quota:${id}:`);
  }
  await t.close();
});

/** A key on the default rate limit (10/min) unless told otherwise. */
async function newKey(opts: NewKeyOptions = {}): Promise<{ key: string; id: string }> {
  const k = await t.newKey({ rateLimit: null, ...opts });
  keyIds.push(k.id);
  return k;
}

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function sync(base: string, apiKey: string): Promise<Reply> {
  const res = await fetch(`${base}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ external_id: `limits-${randomBytes(6).toString('hex')}`, image_base64: IMAGE }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Requests of the key that ran to the end (DONE). */
async function processedRows(keyId: string): Promise<number> {
  const row = await t.db('requests').where({ key_id: keyId, status: 'DONE' }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

function assertRateLimited(r: Reply): void {
  assert.equal(r.status, 429);
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'error_code', 'message']);
  assert.equal(r.body.error, 'Too Many Requests');
  assert.equal(r.body.error_code, 'RATE_LIMITED');
  assert.equal(r.headers.get('ratelimit-limit'), '10');
  assert.equal(r.headers.get('ratelimit-remaining'), '0');
  const reset = Number(r.headers.get('ratelimit-reset'));
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
}

describe('limits through the API, one process', () => {
  test('the app runs on Redis', async () => {
    assert.deepEqual(await t.services.limits.ready(), { ok: true, detail: 'redis', degraded: false });
  });

  test('30 parallel sync calls of one key: exactly 10 processed, 20 × 429 RATE_LIMITED', async () => {
    const { key, id } = await newKey();
    const replies = await Promise.all(Array.from({ length: 30 }, () => sync(base, key)));
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    assert.equal(ok.length, 10, `statuses: ${replies.map((r) => r.status).join(',')}`);
    assert.equal(limited.length, 20);
    for (const r of limited) assertRateLimited(r);
    for (const r of ok) {
      assert.equal(r.body.success, true);
      assert.equal(r.headers.get('ratelimit-limit'), '10');
      assert.equal(r.headers.get('retry-after'), null);
    }
    assert.deepEqual(ok.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(await processedRows(id), 10);
  });

  test('quota 5 with 12 parallel sync calls: exactly 5 processed, 7 × 429 MONTHLY_QUOTA_EXCEEDED', async () => {
    const { key, id } = await newKey({ quota: 5, rateLimit: 100 });
    const replies = await Promise.all(Array.from({ length: 12 }, () => sync(base, key)));
    assert.equal(replies.filter((r) => r.status === 200).length, 5, `statuses: ${replies.map((r) => r.status).join(',')}`);
    const refused = replies.filter((r) => r.status === 429);
    assert.equal(refused.length, 7);
    for (const r of refused) {
      assert.equal(r.body.error_code, 'MONTHLY_QUOTA_EXCEEDED');
      assert.equal(r.body.error, 'Too Many Requests');
    }
    const usage = await t.db('key_usage').where({ key_id: id }).first<{ used: number }>('used');
    assert.equal(usage.used, 5);
    assert.equal(await processedRows(id), 5);
  });
});

describe('limits through the API, two processes sharing PostgreSQL and Redis', () => {
  const children: ChildProcess[] = [];
  const bases: string[] = [];
  const urls = (i: number): string => bases[i % 2];
  before(async () => {
    for (let i = 0; i < 2; i++) {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/api-replica.ts')], {
        env: { ...process.env, DATABASE_URL: t.database.url, REDIS_URL: TEST_REDIS_URL, DATA_DIR: t.dataDir },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
    }
    for (const child of children) {
      const lines = createInterface({ input: child.stdout! });
      const [line] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => ['exited'])])) as [string];
      const m = /^listening (\d+)$/.exec(line);
      assert.ok(m, `API replica did not start: ${line}`);
      bases.push(`http://127.0.0.1:${m[1]}`);
    }
  });
  after(async () => {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
    }
  });

  test('30 parallel sync calls split 15/15: exactly 10 processed, 20 × 429 RATE_LIMITED', async () => {
    const { key, id } = await newKey();
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => sync(urls(i), key)));
    assert.equal(replies.filter((r) => r.status === 200).length, 10, `statuses: ${replies.map((r) => r.status).join(',')}`);
    const limited = replies.filter((r) => r.status === 429);
    assert.equal(limited.length, 20);
    for (const r of limited) assertRateLimited(r);
    assert.equal(await processedRows(id), 10);
  });

  test('quota 5 with 12 parallel calls split 6/6: exactly 5 processed', async () => {
    const { key, id } = await newKey({ quota: 5, rateLimit: 100 });
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => sync(urls(i), key)));
    assert.equal(replies.filter((r) => r.status === 200).length, 5);
    assert.equal(replies.filter((r) => r.status === 429 && r.body.error_code === 'MONTHLY_QUOTA_EXCEEDED').length, 7);
    assert.equal(await processedRows(id), 5);
  });
});
