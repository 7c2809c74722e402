/**
 * Refunds recorded on the request row: ending a charged request ERROR as the service's fault
 * gives its unit of quota and balance back once, however many replicas, retries or sweeps
 * try; an uncharged one gives nothing; a client-fault ERROR keeps its charge.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { PgRequestRepository, failAbandonedRequests } from '../../src/store/requests.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp({}, { sweepAbandoned: false });
});
after(async () => {
  await t?.close();
});

const MONTH = new Date().toISOString().slice(0, 7);

/** n batch requests charged (charged) for a new key, leaving `balance` on its organisation. */
async function charged(n: number, balance: number) {
  const k = await t.newKey({ balance: balance + n });
  const repo = new PgRequestRepository(t.db, 'test-instance');
  const charged = await repo.charge({
    keyId: k.id, orgId: k.orgId, quota: 100, month: MONTH, idempotent: false, status: 'QUEUED',
    requests: Array.from({ length: n }, (_, i) => ({
      id: randomUUID(), keyId: k.id, orgId: k.orgId, kind: 'batch' as const, externalId: `r${i}`, source: 'url' as const,
      sourceUrl: 'https://example.com/a.png', imageFingerprint: 'url:a',
    })),
  });
  assert.equal(charged.outcome, 'charged');
  const rows = charged.outcome === 'charged' ? charged.records : [];
  const state = async () => ({
    used: Number((await t.db('key_usage').where({ key_id: k.id, month: MONTH }).first()).used),
    balance: Number((await t.db('organizations').where({ id: k.orgId }).first()).balance),
  });
  return { k, repo, ids: rows.map((r) => r.id), state };
}

test('finishError with refund gives back once; without refund keeps the charge', async () => {
  const { repo, ids, state } = await charged(3, 7);
  assert.equal(await repo.finishError(ids[0], { error: 'inference failed', responseCode: 503, refund: true }), true);
  assert.deepEqual(await state(), { used: 2, balance: 8 });
  assert.equal(await repo.finishError(ids[0], { error: 'again', responseCode: 503, refund: true }), false);
  assert.equal(await repo.failUndelivered(ids[0], 'again', 500), false, 'an ERROR request is not ended twice');
  assert.deepEqual(await state(), { used: 2, balance: 8 });
  // A download that failed is the client's image: processed, charged.
  assert.equal(await repo.finishError(ids[1], { error: 'download failed: HTTP 404', responseCode: 404 }), true);
  assert.deepEqual(await state(), { used: 2, balance: 8 });
  const row = await t.db('requests').where({ id: ids[0] }).first();
  assert.ok(row.refunded_at instanceof Date);
  assert.equal((await t.db('requests').where({ id: ids[1] }).first()).refunded_at, null);
});

test('failUndelivered turns a DONE the client never got into ERROR, refunded exactly once under concurrency', async () => {
  const { repo, ids, state } = await charged(1, 5);
  await repo.markProcessing(ids[0]);
  await repo.finishDone(ids[0], { results: [], model: { name: 'm', version: '1' }, processingTimeMs: 5 });
  const attempts = await Promise.all(Array.from({ length: 8 }, () => repo.failUndelivered(ids[0], 'the answer could not be confirmed', 503)));
  assert.equal(attempts.filter(Boolean).length, 1);
  assert.deepEqual(await state(), { used: 0, balance: 6 });
  const row = await t.db('requests').where({ id: ids[0] }).first();
  assert.equal(row.status, 'ERROR');
  assert.equal(row.response_code, 503);
});

test('the sweep and a late finishError race: one ends it, one refund', async () => {
  const { repo, ids, state } = await charged(2, 2);
  await t.db('requests').whereIn('id', ids).update({ created_at: t.db.raw(`now() - interval '10 minutes'`) });
  const [swept, late] = await Promise.all([failAbandonedRequests(t.db, 60_000), repo.finishError(ids[0], { error: 'x', responseCode: 500, refund: true })]);
  assert.equal(swept + (late ? 1 : 0), 2);
  assert.deepEqual(await state(), { used: 0, balance: 4 });
  assert.equal(await failAbandonedRequests(t.db, 60_000), 0);
  assert.deepEqual(await state(), { used: 0, balance: 4 });
});

test('an uncharged request (charge_month null) ends ERROR without touching quota or balance', async () => {
  const k = await t.newKey({ balance: 3 });
  await t.db('key_usage').insert({ key_id: k.id, month: MONTH, used: 1 });
  const repo = new PgRequestRepository(t.db, 'test-instance');
  // A row from before charging was recorded on the row (migration 0200).
  const [r] = await t.db('requests')
    .insert({ key_id: k.id, org_id: k.orgId, kind: 'batch', source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:a' })
    .returning<Array<{ id: string }>>('id');
  assert.equal(await repo.finishError(r.id, { error: 'x', responseCode: 500, refund: true }), true);
  assert.equal(Number((await t.db('key_usage').where({ key_id: k.id }).first()).used), 1);
  assert.equal(Number((await t.db('organizations').where({ id: k.orgId }).first()).balance), 3);
});
