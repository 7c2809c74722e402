import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ImageError } from '../../src/images/errors.js';
import { RequestCharging } from '../../src/recognition/charging.js';
import { fanOutBatch, runBounded, type BatchDeps } from '../../src/recognition/batch-fan-out.js';
import type { Outcome } from '../../src/recognition/deadline-pipeline.js';
import type { RequestRecord } from '../../src/recognition/ports.js';
import { caller, InMemoryRequests } from './fakes.js';

/** A batch whose pipeline answers per URL from `script`. */
function setup(script: (url: string, record: RequestRecord, requests: InMemoryRequests) => Promise<Outcome>, requests = new InMemoryRequests(100, 100)) {
  const sizes: number[] = [];
  const deps: BatchDeps = {
    charging: new RequestCharging({ requests }),
    pipeline: { run: (_c, record, source) => script(source.kind === 'url' ? source.url : '', record, requests) },
    fetcher: {
      validate: (url) => {
        if (!url.startsWith('https://')) throw new ImageError('INVALID_IMAGE_URL', 'only https');
      },
    },
    observer: { recognition: () => {}, batchSize: (n) => sizes.push(n) },
    concurrency: 2,
  };
  return { deps, requests, sizes };
}

const done = (record: RequestRecord): Outcome => ({ kind: 'finished', record: { ...record, status: 'DONE' } });

test('URLs refused on sight are FAILED and free; only accepted ones are charged', async () => {
  const { deps, requests, sizes } = setup(async (_u, r) => done(r));
  const out = await fanOutBatch(deps, caller, { urls: ['https://a/1.jpg', 'ftp://b', 'https://a/2.jpg'], externalId: 'b1' }, Date.now() + 5_000);
  assert.deepEqual(out.results.map((e) => e.status), ['DONE', 'FAILED', 'DONE']);
  assert.equal(out.results[1].request_id, null);
  assert.deepEqual([requests.used, requests.balance], [2, 98]);
  assert.deepEqual(sizes, [3]);
});

test('batch_id: the external_id as sent, or an id assigned when none was sent, carried by every image\'s request', async () => {
  const given = setup(async (_u, r) => done(r));
  const named = await fanOutBatch(given.deps, caller, { urls: ['https://a/1.jpg'], externalId: 'shelf-7' }, Date.now() + 5_000);
  assert.equal(named.batch_id, 'shelf-7');
  assert.deepEqual([...given.requests.rows.values()].map((r) => r.externalId), ['shelf-7']);

  const none = setup(async (_u, r) => done(r));
  const a = await fanOutBatch(none.deps, caller, { urls: ['https://a/1.jpg', 'ftp://b', 'https://a/2.jpg'], externalId: null }, Date.now() + 5_000);
  const b = await fanOutBatch(none.deps, caller, { urls: ['https://a/3.jpg'], externalId: null }, Date.now() + 5_000);
  assert.match(a.batch_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(a.batch_id, b.batch_id, 'each batch gets its own');
  const byId = (id: string | null) => none.requests.rows.get(id!)?.externalId;
  assert.deepEqual(a.results.filter((e) => e.request_id !== null).map((e) => byId(e.request_id)), [a.batch_id, a.batch_id]);
  assert.equal(byId(b.results[0].request_id), b.batch_id);
});

test('one image refused after DNS is given back; a failing image never affects the others', async () => {
  const { deps, requests } = setup(async (url, r, repo) => {
    if (url.endsWith('/refused')) {
      // The pipeline removes a refused image's row, which gives its charge back.
      await repo.discard(r.id);
      return { kind: 'refused', error: new ImageError('INVALID_IMAGE_URL', 'private address') };
    }
    if (url.endsWith('/boom')) throw new Error('unexpected');
    if (url.endsWith('/slow')) return { kind: 'timeout', record: null };
    return done(r);
  });
  const out = await fanOutBatch(deps, caller, { urls: ['https://a/refused', 'https://a/boom', 'https://a/slow', 'https://a/ok'], externalId: null }, Date.now() + 5_000);
  assert.deepEqual(
    out.results.map((e) => [e.status, e.response_code, e.request_id === null]),
    [
      ['FAILED', null, true],
      ['FAILED', 500, false],
      ['FAILED', 408, false],
      ['DONE', null, false],
    ],
  );
  assert.deepEqual([requests.used, requests.balance], [3, 97]);
});

test('a failing charge fails the batch with nothing run', async () => {
  let ran = 0;
  const { deps, requests } = setup(async (_u, r) => {
    ran++;
    return done(r);
  });
  requests.charge = async () => {
    throw new Error('db down');
  };
  await assert.rejects(fanOutBatch(deps, caller, { urls: ['https://a/1', 'https://a/2'], externalId: null }, Date.now() + 5_000), /db down/);
  assert.equal(ran, 0);
});

test('an insufficient balance refuses the batch before any record is written', async () => {
  const { deps, requests, sizes } = setup(async (_u, r) => done(r), new InMemoryRequests(100, 1));
  await assert.rejects(fanOutBatch(deps, caller, { urls: ['https://a/1', 'https://a/2'], externalId: null }, Date.now() + 5_000), { code: 'INSUFFICIENT_BALANCE' });
  assert.equal(requests.rows.size, 0);
  assert.deepEqual(sizes, [], 'a refused batch is not counted');
});

test('runBounded never runs more than the limit at once and runs every task', async () => {
  let running = 0;
  let peak = 0;
  const seen: number[] = [];
  await runBounded(10, 3, async (i) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setImmediate(r));
    seen.push(i);
    running--;
  });
  assert.equal(peak, 3);
  assert.deepEqual(seen.sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});
