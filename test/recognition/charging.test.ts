import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestCharging, CLAIM_ATTEMPTS, secondsUntilNextMonthUtc, type RequestDraft } from '../../src/recognition/charging.js';
import { RecognitionRejected } from '../../src/recognition/errors.js';
import type { ChargeOrder } from '../../src/recognition/ports.js';
import { caller, InMemoryRequests } from './fakes.js';

function setup(quota = 10, balance: number | null = 10, now?: () => number) {
  const requests = new InMemoryRequests(quota, balance);
  return { requests, charging: new RequestCharging({ requests, now }) };
}

const draft = (overrides: Partial<RequestDraft> = {}): RequestDraft => ({
  keyId: caller.keyId,
  orgId: caller.orgId,
  kind: 'sync',
  externalId: 'ext-1',
  source: 'url',
  sourceUrl: 'https://img.example/a.jpg',
  imageFingerprint: 'url:https://img.example/a.jpg',
  ...overrides,
});

const rejected = (code: string) => (err: unknown) => err instanceof RecognitionRejected && err.code === code;

test('a sync charge is one repository call: claimed, charged, written QUEUED', async () => {
  const { requests, charging } = setup(10, 5);
  const claim = await charging.chargeSync(caller, draft());
  assert.equal(claim.kind, 'claimed');
  assert.equal(claim.record.status, 'QUEUED');
  assert.equal(claim.record.startedAt, null);
  assert.deepEqual(requests.calls, ['charge']);
  assert.deepEqual([requests.used, requests.balance], [1, 4]);
});

test('a sync charge of an image in the body is written PROCESSING, started: it has nothing to fetch', async () => {
  const { requests, charging } = setup(10, 5);
  const claim = await charging.chargeSync(caller, draft({ source: 'base64', sourceUrl: null, imageFingerprint: 'sha256:ab' }));
  assert.equal(claim.kind, 'claimed');
  assert.equal(claim.record.status, 'PROCESSING');
  assert.ok(claim.record.startedAt instanceof Date);
  assert.deepEqual(requests.calls, ['charge']);
});

test('claim retries when the holder ended ERROR between check and read, then claims', async () => {
  const { requests, charging } = setup();
  requests.scriptedAdmits.push({ outcome: 'existing', record: null }, { outcome: 'existing', record: null });
  const claim = await charging.chargeSync(caller, draft());
  assert.equal(claim.kind, 'claimed');
  assert.equal(requests.calls.filter((c) => c === 'charge').length, 3);
});

test('claim gives up with 409 REQUEST_IN_PROGRESS after its attempts all find a vanished holder', async () => {
  const { requests, charging } = setup();
  for (let i = 0; i < CLAIM_ATTEMPTS + 1; i++) requests.scriptedAdmits.push({ outcome: 'existing', record: null });
  await assert.rejects(charging.chargeSync(caller, draft()), rejected('REQUEST_IN_PROGRESS'));
  assert.equal(requests.calls.filter((c) => c === 'charge').length, CLAIM_ATTEMPTS);
});

test('claim: a DONE holder with the same image replays free, another image is 422, a running one 409', async () => {
  const { requests, charging } = setup();
  const first = await charging.chargeSync(caller, draft());
  assert.equal(first.kind, 'claimed');
  await assert.rejects(charging.chargeSync(caller, draft()), rejected('REQUEST_IN_PROGRESS'));
  await assert.rejects(charging.chargeSync(caller, draft({ imageFingerprint: 'url:other' })), rejected('IDEMPOTENCY_KEY_REUSED'));
  await requests.finishDone(first.record.id, { results: [], model: { name: 'm', version: '1' }, processingTimeMs: 1 });
  const again = await charging.chargeSync(caller, draft());
  assert.equal(again.kind, 'replay');
  assert.equal(again.record.id, first.record.id);
  assert.equal(requests.used, 1, 'only the first was charged');
});

test('quota exhausted is 429 with Retry-After to next month; a short balance is 402; nothing written', async () => {
  const { requests, charging } = setup(1, 10);
  await charging.chargeSync(caller, draft({ externalId: 'a' }));
  const err = await charging.chargeSync(caller, draft({ externalId: 'b' })).catch((e: unknown) => e);
  assert.ok(rejected('MONTHLY_QUOTA_EXCEEDED')(err));
  assert.ok((err as RecognitionRejected).details.retryAfterSeconds! >= 1);

  const poor = setup(10, 1);
  await assert.rejects(poor.charging.chargeBatch(caller, [draft({ kind: 'batch' }), draft({ kind: 'batch' })]), rejected('INSUFFICIENT_BALANCE'));
  assert.equal(poor.requests.rows.size, 0);
  assert.deepEqual([poor.requests.used, poor.requests.balance], [0, 1]);
  assert.equal(requests.rows.size, 1);
});

test('a batch is admitted whole, QUEUED, in the drafts order, with distinct ids; an empty one costs nothing', async () => {
  const { requests, charging } = setup(10, null);
  const drafts = ['https://a/1', 'https://a/2', 'https://a/3'].map((u) => draft({ kind: 'batch', externalId: 'b', sourceUrl: u, imageFingerprint: `url:${u}` }));
  const records = await charging.chargeBatch(caller, drafts);
  assert.deepEqual(records.map((r) => r.sourceUrl), ['https://a/1', 'https://a/2', 'https://a/3']);
  assert.ok(records.every((r) => r.status === 'QUEUED'));
  assert.equal(new Set(records.map((r) => r.id)).size, 3);
  assert.deepEqual([requests.used, requests.balance], [3, null]);
  assert.deepEqual(await charging.chargeBatch(caller, []), []);
  assert.equal(requests.calls.length, 1);
});

test('the quota month is the UTC month of the charge, whatever the local time', async () => {
  const seen: ChargeOrder[] = [];
  const charging = new RequestCharging({
    requests: {
      charge: async (a) => {
        seen.push(a);
        return { outcome: 'quota', used: 0 };
      },
    },
    now: () => Date.parse('2026-02-28T23:30:00-05:00'),
  });
  await assert.rejects(charging.chargeSync(caller, draft()), rejected('MONTHLY_QUOTA_EXCEEDED'));
  assert.equal(seen[0].month, '2026-03');
  assert.equal(seen[0].quota, caller.limits.monthlyQuota);
  assert.equal(seen[0].idempotent, true);
});

test('secondsUntilNextMonthUtc counts to the first of next month, UTC', () => {
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-01-31T23:59:00Z')), 60);
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-12-31T23:00:00Z')), 3600);
});
