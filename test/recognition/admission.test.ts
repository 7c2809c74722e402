import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Admission, CLAIM_ATTEMPTS, secondsUntilNextMonthUtc } from '../../src/recognition/admission.js';
import { RecognitionRejected } from '../../src/recognition/errors.js';
import { caller, InMemoryLimits, InMemoryRequests, newRequest, recordingLogger } from './fakes.js';

function setup(quota = 10, balance = 10) {
  const requests = new InMemoryRequests();
  const limits = new InMemoryLimits(quota, balance);
  const logger = recordingLogger();
  return { requests, limits, logger, admission: new Admission({ requests, limits, logger }) };
}

const rejected = (code: string) => (err: unknown) => err instanceof RecognitionRejected && err.code === code;

test('claim retries when the holder ended ERROR between insert and read, then claims', async () => {
  const { requests, admission } = setup();
  requests.scriptedClaims.push({ claimed: false, existing: null }, { claimed: false, existing: null });
  const claim = await admission.claimSync(newRequest());
  assert.equal(claim.kind, 'claimed');
  assert.equal(requests.calls.filter((c) => c === 'claimSync').length, 3);
});

test('claim gives up with 409 REQUEST_IN_PROGRESS after its attempts all find a vanished holder', async () => {
  const { requests, admission } = setup();
  for (let i = 0; i < CLAIM_ATTEMPTS + 1; i++) requests.scriptedClaims.push({ claimed: false, existing: null });
  await assert.rejects(admission.claimSync(newRequest()), rejected('REQUEST_IN_PROGRESS'));
  assert.equal(requests.calls.filter((c) => c === 'claimSync').length, CLAIM_ATTEMPTS);
});

test('claim: a DONE holder with the same image replays, another image is 422, a running one 409', async () => {
  const { requests, admission } = setup();
  const first = await admission.claimSync(newRequest());
  assert.equal(first.kind, 'claimed');
  await assert.rejects(admission.claimSync(newRequest()), rejected('REQUEST_IN_PROGRESS'));
  await assert.rejects(admission.claimSync(newRequest({ imageFingerprint: 'url:other' })), rejected('IDEMPOTENCY_KEY_REUSED'));
  await requests.finishDone(first.record.id, { results: [], model: { name: 'm', version: '1' }, processingTimeMs: 1 });
  const again = await admission.claimSync(newRequest());
  assert.equal(again.kind, 'replay');
  assert.equal(again.record.id, first.record.id);
});

test('charge takes quota then balance and returns the month charged', async () => {
  const { limits, admission } = setup(10, 5);
  let undone = 0;
  const period = await admission.charge(caller, 2, async () => void undone++);
  assert.equal(period, '2026-11');
  assert.deepEqual([limits.used, limits.balance, undone], [2, 3, 0]);
});

test('charge rollback: balance short gives the quota back to its month and undoes the claim', async () => {
  const { limits, admission } = setup(10, 1);
  let undone = 0;
  await assert.rejects(admission.charge(caller, 2, async () => void undone++), rejected('INSUFFICIENT_BALANCE'));
  assert.deepEqual([limits.used, limits.balance, undone], [0, 1, 1]);
  assert.deepEqual(limits.releases, [{ units: 2, period: '2026-11' }]);
});

test('charge rollback: a failing balance store releases the quota, undoes, and rethrows its error', async () => {
  const { limits, admission } = setup(10, 10);
  limits.failDebit = new Error('db down');
  let undone = 0;
  await assert.rejects(admission.charge(caller, 1, async () => void undone++), /db down/);
  assert.deepEqual([limits.used, limits.balance, undone], [0, 10, 1]);
});

test('charge: quota exhausted is 429 with Retry-After to next month, nothing taken, claim undone', async () => {
  const { limits, admission } = setup(1, 10);
  let undone = 0;
  await admission.charge(caller, 1, async () => {});
  const err = await admission.charge(caller, 1, async () => void undone++).catch((e: unknown) => e);
  assert.ok(rejected('MONTHLY_QUOTA_EXCEEDED')(err));
  assert.ok((err as RecognitionRejected).details.retryAfterSeconds! >= 1);
  assert.deepEqual([limits.used, limits.balance, undone], [1, 9, 1]);
});

test('giveBack returns quota and balance; a failure is logged, never thrown', async () => {
  const { limits, logger, admission } = setup(10, 10);
  await admission.charge(caller, 3, async () => {});
  await admission.giveBack(caller, 3, '2026-11');
  assert.deepEqual([limits.used, limits.balance], [0, 10]);
  limits.releaseQuota = async () => {
    throw new Error('redis down');
  };
  await admission.giveBack(caller, 1, '2026-11');
  assert.deepEqual(logger.errors, ['could not give back quota/balance']);
});

test('secondsUntilNextMonthUtc counts to the first of next month, UTC', () => {
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-01-31T23:59:00Z')), 60);
  assert.equal(secondsUntilNextMonthUtc(new Date('2026-12-31T23:00:00Z')), 3600);
});
