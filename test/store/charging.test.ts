/**
 * RequestCharging on real PostgreSQL (recognition_admit): claim, quota, balance and the rows in
 * one transaction. Exact under concurrency, all or nothing when refused or when its
 * connection dies mid-way, charged once when repeated.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Knex } from 'knex';
import type { ChargeOrder, ChargeResult, NewRequest } from '../../src/recognition/ports.js';
import { createDb, type Db } from '../../src/store/db.js';
import { PgRequestRepository } from '../../src/store/requests.js';
import type { KeyLimits } from '../../src/limits/index.js';
import { eventually } from '../helpers/eventually.js';
import { count, makeKey, openTestDb, type TestDb } from '../limits/harness.js';

let t: TestDb;
let repo: PgRequestRepository;
before(async () => {
  t = await openTestDb();
  repo = new PgRequestRepository(t.db, 'charging-test');
});
after(async () => {
  await t?.close();
});

const MONTH = '2026-05';

function draft(key: KeyLimits, overrides: Partial<NewRequest> = {}): NewRequest {
  return {
    id: randomUUID(),
    keyId: key.keyId,
    orgId: key.orgId,
    kind: 'batch',
    externalId: 'batch-1',
    source: 'url',
    sourceUrl: 'https://example.com/a.png',
    imageFingerprint: 'url:https://example.com/a.png',
    ...overrides,
  };
}

function order(key: KeyLimits, requests: NewRequest[], extra: Partial<ChargeOrder> = {}): ChargeOrder {
  const idempotent = requests[0]?.kind === 'sync';
  return { keyId: key.keyId, orgId: key.orgId, quota: key.monthlyQuota, month: MONTH, idempotent, status: idempotent ? 'PROCESSING' : 'QUEUED', requests, ...extra };
}

const sync = (key: KeyLimits, externalId: string, fingerprint = 'url:https://example.com/a.png') =>
  order(key, [draft(key, { kind: 'sync', externalId, imageFingerprint: fingerprint })]);
const batch = (key: KeyLimits, n: number) => order(key, Array.from({ length: n }, () => draft(key)));

async function state(key: KeyLimits, month = MONTH) {
  const usage = await t.db('key_usage').where({ key_id: key.keyId, month }).first<{ used: number } | undefined>('used');
  const org = await t.db('organizations').where({ id: key.orgId }).first<{ balance: string | null }>('balance');
  const rows = await t.db('requests').where({ key_id: key.keyId }).count<Array<{ n: string }>>({ n: '*' });
  return { used: usage === undefined ? 0 : Number(usage.used), balance: org.balance === null ? null : Number(org.balance), rows: Number(rows[0].n) };
}

const charged = (r: ChargeResult) => r.outcome === 'charged';

test('quota 5 with 12 parallel sync charges admit exactly 5; each row records its charge', async () => {
  const key = await makeKey(t.db, { quota: 5, balance: 100 });
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => repo.charge(sync(key, `q-${i}`))));
  assert.equal(count(results, charged), 5);
  for (const r of results.filter((x) => !charged(x))) assert.deepEqual(r, { outcome: 'quota', used: 5 });
  assert.deepEqual(await state(key), { used: 5, balance: 95, rows: 5 });
  const rows = await t.db('requests').where({ key_id: key.keyId });
  assert.ok(rows.every((r: { charge_month: string; status: string; started_at: Date | null }) => r.charge_month === MONTH && r.status === 'PROCESSING' && r.started_at instanceof Date));
});

test('a batch fits or is refused whole, in the order given; more units than the quota are refused', async () => {
  const key = await makeKey(t.db, { quota: 10 });
  const results = await Promise.all([4, 4, 4, 4].map((n) => repo.charge(batch(key, n))));
  assert.equal(count(results, charged), 2);
  assert.equal((await repo.charge(batch(key, 3))).outcome, 'quota');
  const two = order(key, [draft(key, { sourceUrl: 'https://e/1' }), draft(key, { sourceUrl: 'https://e/2' })]);
  const ok = await repo.charge(two);
  assert.equal(ok.outcome, 'charged');
  assert.deepEqual(ok.outcome === 'charged' && ok.records.map((r) => [r.id, r.sourceUrl, r.status]), two.requests.map((r) => [r.id, r.sourceUrl, 'QUEUED']));
  assert.deepEqual(await repo.charge(batch(key, 11)), { outcome: 'quota', used: 10 });
  const zero = await makeKey(t.db, { quota: 0 });
  assert.deepEqual(await repo.charge(batch(zero, 1)), { outcome: 'quota', used: 0 });
  assert.deepEqual(await state(key), { used: 10, balance: null, rows: 10 });
});

test('the quota is counted per month: a new month starts from zero', async () => {
  const key = await makeKey(t.db, { quota: 3 });
  const jan = await Promise.all(Array.from({ length: 5 }, () => repo.charge(batch(key, 1)).then((r) => r)));
  assert.equal(count(jan, charged), 3);
  const feb = await Promise.all(Array.from({ length: 5 }, () => repo.charge({ ...batch(key, 1), month: '2026-06' })));
  assert.equal(count(feb, charged), 3);
  assert.equal((await state(key, '2026-06')).used, 3);
});

test('balance 7 under 20 parallel charges: exactly 7, and the quota of the refused ones is not kept', async () => {
  const key = await makeKey(t.db, { quota: 100, balance: 7 });
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => repo.charge(sync(key, `b-${i}`))));
  assert.equal(count(results, charged), 7);
  assert.equal(count(results, (r) => r.outcome === 'balance'), 13);
  assert.deepEqual(await state(key), { used: 7, balance: 0, rows: 7 });

  await t.db('organizations').where({ id: key.orgId }).update({ balance: 3 });
  assert.deepEqual(await repo.charge(batch(key, 4)), { outcome: 'balance' }, 'a batch larger than the balance is refused whole');
  assert.deepEqual(await state(key), { used: 7, balance: 3, rows: 7 });

  const unlimited = await makeKey(t.db, { balance: null });
  const free = await Promise.all(Array.from({ length: 10 }, () => repo.charge(batch(unlimited, 2))));
  assert.ok(free.every(charged));
  assert.deepEqual(await state(unlimited), { used: 20, balance: null, rows: 20 });
});

test('an unknown organisation is refused with nothing charged', async () => {
  const key = await makeKey(t.db, { quota: 5 });
  const stranger = { ...key, orgId: randomUUID() };
  assert.deepEqual(await repo.charge(order(stranger, [draft(stranger)])), { outcome: 'balance' });
  assert.deepEqual(await state(key), { used: 0, balance: null, rows: 0 });
});

test('10 parallel claims of one external_id: one admitted and charged, the others see it', async () => {
  const key = await makeKey(t.db, { quota: 100, balance: 50 });
  const results = await Promise.all(Array.from({ length: 10 }, () => repo.charge(sync(key, 'same'))));
  const winners = results.filter(charged);
  assert.equal(winners.length, 1);
  const id = winners[0].outcome === 'charged' ? winners[0].records[0].id : '';
  for (const r of results.filter((x) => !charged(x))) {
    assert.equal(r.outcome, 'existing');
    assert.equal(r.outcome === 'existing' && r.record?.id, id);
  }
  assert.deepEqual(await state(key), { used: 1, balance: 49, rows: 1 });
  // After it ended ERROR the slot is free again: a retry is a new, charged request.
  await repo.finishError(id, { error: 'x', responseCode: 500, refund: true });
  assert.equal((await repo.charge(sync(key, 'same'))).outcome, 'charged');
  assert.deepEqual(await state(key), { used: 1, balance: 49, rows: 2 });
});

test('repeating a charge that committed (its answer lost) returns its rows and charges nothing more', async () => {
  const key = await makeKey(t.db, { quota: 10, balance: 10 });
  const call = batch(key, 3);
  const first = await repo.charge(call);
  const again = await repo.charge(call);
  assert.equal(again.outcome, 'charged');
  assert.deepEqual(again.outcome === 'charged' && again.records.map((r) => r.id), call.requests.map((r) => r.id));
  assert.deepEqual(first.outcome === 'charged' && first.records.map((r) => r.id), call.requests.map((r) => r.id));
  assert.deepEqual(await state(key), { used: 3, balance: 7, rows: 3 });
});

test('discard removes the row and gives its unit back, once under concurrency', async () => {
  const key = await makeKey(t.db, { quota: 10, balance: 10 });
  const r = await repo.charge(batch(key, 2));
  const ids = r.outcome === 'charged' ? r.records.map((x) => x.id) : [];
  const attempts = await Promise.all(Array.from({ length: 6 }, () => repo.discard(ids[0])));
  assert.equal(attempts.filter(Boolean).length, 1);
  assert.deepEqual(await state(key), { used: 1, balance: 9, rows: 1 });
});

/** Waits until a backend of this file's database (other than `killed`) runs recognition_admit blocked on a lock; returns its pid. */
async function blockedAdmission(db: Db, killed = 0): Promise<number> {
  return eventually(
    async () => {
      const { rows } = await db.raw<{ rows: Array<{ pid: number }> }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT recognition_admit%' AND wait_event_type = 'Lock' AND pid <> ?`,
        [killed],
      );
      return rows[0]?.pid;
    },
    { what: 'a charge blocked on the lock' },
  );
}

test('a connection killed mid-charge (quota taken, balance pending) leaves nothing; the repository retries it once', async () => {
  const key = await makeKey(t.db, { quota: 10, balance: 10 });
  const other = createDb(t.url, { poolMax: 2, applicationName: 'charging-lock' });
  let tx: Knex.Transaction | undefined;
  try {
    // Without a retry: the transaction dies after its quota upsert and takes it along.
    tx = await t.db.transaction();
    await tx('organizations').where({ id: key.orgId }).forUpdate().select('id');
    // (.then starts the query now: a knex builder runs only when awaited.)
    const direct = other.raw(`SELECT recognition_admit(?, ?, ?, ?, 'QUEUED', 'x', false, ?::jsonb)`, [
      key.keyId,
      key.orgId,
      MONTH,
      10,
      JSON.stringify([{ id: randomUUID(), kind: 'batch', external_id: null, source: 'url', source_url: 'https://e/1', image_fingerprint: 'url:e' }]),
    ]).then(() => 'committed');
    await t.db.raw('SELECT pg_terminate_backend(?)', [await blockedAdmission(t.db)]);
    await assert.rejects(direct);
    await tx.commit();
    assert.deepEqual(await state(key), { used: 0, balance: 10, rows: 0 });

    // Through the repository: the lost connection is retried, and the retry charges once.
    tx = await t.db.transaction();
    await tx('organizations').where({ id: key.orgId }).forUpdate().select('id');
    const retried = new PgRequestRepository(other, 'charging-test').charge(batch(key, 1));
    const killed = await blockedAdmission(t.db);
    await t.db.raw('SELECT pg_terminate_backend(?)', [killed]);
    // The retry queues on the lock again before it is released.
    await blockedAdmission(t.db, killed);
    await tx.commit();
    assert.equal((await retried).outcome, 'charged');
    assert.deepEqual(await state(key), { used: 1, balance: 9, rows: 1 });
  } finally {
    if (tx !== undefined && !tx.isCompleted()) await tx.rollback();
    await other.destroy();
  }
});
