/**
 * Password-check throttling on real PostgreSQL: each attempt is counted before its check
 * (a parallel burst gets no more checks through than the policy allows), the slowing phase
 * doubles, then the lock; a success clears the account and gives the address its attempt
 * back; IPv6 addresses share a bucket per /64. The hashing queue: bounded, refuses at once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Knex } from 'knex';
import { PasswordHasher, PasswordHashingBusy } from '../../src/console/passwords.js';
import { AttemptThrottled, LoginThrottle, accountSubject, addressSubject, type AttemptSubjects } from '../../src/console/throttle.js';
import { createDb } from '../../src/store/db.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

let database: TestDatabase;
let db: Knex;
before(async () => {
  database = await createTestDatabase();
  db = createDb(database.url);
  await migrateLatest(db);
});
after(async () => {
  await db.destroy();
  await database.drop();
});

const row = (subject: string) => db('login_throttle').where({ subject }).first<{ failures: number; locked_until: Date | null } | undefined>();
const lockedFor = async (subject: string) =>
  Number((await db('login_throttle').where({ subject }).first(db.raw('coalesce(extract(epoch from (locked_until - now())), 0) as s'))).s);
const wrong = async () => null;
const right = async () => ({ id: 'u' });

test('addresses: IPv4 per address, IPv4-mapped IPv6 as its IPv4 address, IPv6 per /64', () => {
  assert.equal(addressSubject('10.1.2.3'), 'address:10.1.2.3');
  assert.equal(addressSubject('::ffff:10.1.2.3'), 'address:10.1.2.3');
  assert.equal(addressSubject('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), 'address:2001:db8:1:2::/64');
  assert.equal(addressSubject('2001:0db8:0001:0002::1'), 'address:2001:db8:1:2::/64');
  assert.notEqual(addressSubject('2001:db8:1:3::1'), addressSubject('2001:db8:1:2::1'));
  assert.equal(accountSubject(' Ada@Example.com '), 'account:ada@example.com');
});

test('failures first slow attempts (1, 2, 4 … s), then lock them; a success clears the account only', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 2, lockAfter: 6, lockSeconds: 900, windowSeconds: 900 },
    address: { slowAfter: 100, lockAfter: 200, lockSeconds: 900, windowSeconds: 900 },
  });
  const s: AttemptSubjects = { account: accountSubject('ada@example.com'), address: addressSubject('10.1.1.1') };
  assert.equal(await throttle.check(s, wrong), null);
  assert.equal(await lockedFor(s.account), 0, 'one failure: no wait');
  assert.equal(await throttle.check(s, wrong), null); // 2nd: locks 1 s
  const slow = await lockedFor(s.account);
  assert.ok(slow > 0 && slow <= 1, `the 2nd failure slows by 1 s (got ${slow})`);
  let ran = false;
  await assert.rejects(
    throttle.check(s, async () => ((ran = true), null)),
    (err: unknown) => err instanceof AttemptThrottled && err.retryAfterSeconds >= 1,
  );
  assert.equal(ran, false, 'a throttled attempt never reaches its check');
  assert.equal((await row(s.account))?.failures, 2, 'a refused attempt is not counted');
  await db('login_throttle').where({ subject: s.account }).update({ failures: 5, locked_until: null });
  await throttle.check(s, wrong); // 6th: locked
  assert.ok((await lockedFor(s.account)) > 800, 'locked for the lock time');

  await db('login_throttle').where({ subject: s.account }).update({ locked_until: null });
  assert.deepEqual(await throttle.check(s, right), { id: 'u' });
  assert.equal(await row(s.account), undefined, 'a success clears the account');
  assert.equal((await row(s.address))?.failures, 3, "the address keeps its 3 failures (the success's attempt given back)");
});

test('a parallel burst gets no more checks through than the policy allows', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 5, lockAfter: 5, lockSeconds: 600, windowSeconds: 600 },
    address: { slowAfter: 1000, lockAfter: 1000, lockSeconds: 600, windowSeconds: 600 },
  });
  const s: AttemptSubjects = { account: accountSubject('burst@example.com'), address: addressSubject('10.2.2.2') };
  let checks = 0;
  const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => throttle.check(s, async () => (checks++, null))));
  assert.equal(checks, 5);
  assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 5);
  assert.ok(outcomes.every((o) => o.status === 'fulfilled' || o.reason instanceof AttemptThrottled));
  assert.equal((await row(s.account))?.failures, 5);
  assert.equal((await row(s.address))?.failures, 5, 'refused attempts count on no subject');
});

test('a check that never ran (hashing queue full) gives its attempt back on both subjects', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 1, lockAfter: 3, lockSeconds: 600, windowSeconds: 600 },
    address: { slowAfter: 1000, lockAfter: 1000, lockSeconds: 600, windowSeconds: 600 },
  });
  const s: AttemptSubjects = { account: accountSubject('busy@example.com'), address: addressSubject('10.3.3.3') };
  await assert.rejects(throttle.check(s, () => Promise.reject(new PasswordHashingBusy(1))), PasswordHashingBusy);
  assert.equal((await row(s.account))?.failures, 0);
  assert.equal((await row(s.account))?.locked_until, null, 'the lock its reservation set is lifted');
  assert.equal((await row(s.address))?.failures, 0);
});

test('an attempt after the window starts a new count', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 2, lockAfter: 3, lockSeconds: 900, windowSeconds: 60 },
    address: { slowAfter: 100, lockAfter: 200, lockSeconds: 900, windowSeconds: 60 },
  });
  const s: AttemptSubjects = { account: accountSubject('old@example.com'), address: addressSubject('10.4.4.4') };
  await throttle.check(s, wrong);
  await throttle.check(s, wrong);
  await db('login_throttle').where({ subject: s.account }).update({ window_started_at: db.raw(`now() - interval '2 minutes'`), locked_until: null });
  await throttle.check(s, wrong);
  assert.equal((await row(s.account))?.failures, 1);
  assert.equal(await lockedFor(s.account), 0);
});

test('rows of windows older than a day that lock nothing are forgotten', async () => {
  const throttle = new LoginThrottle(db);
  const stale = addressSubject('10.9.9.9');
  const lockedStale = addressSubject('10.9.9.8');
  await throttle.check({ account: accountSubject('x@example.com'), address: stale }, wrong);
  await throttle.check({ account: accountSubject('y@example.com'), address: lockedStale }, wrong);
  await db('login_throttle').where({ subject: stale }).update({ window_started_at: db.raw(`now() - interval '2 days'`) });
  await db('login_throttle').where({ subject: lockedStale }).update({ window_started_at: db.raw(`now() - interval '2 days'`), locked_until: db.raw(`now() + interval '1 hour'`) });
  await throttle.check({ account: accountSubject('z@example.com'), address: addressSubject('10.9.9.7') }, wrong);
  assert.equal(await row(stale), undefined);
  assert.ok(await row(lockedStale), 'a live lock stays');
});

test('the hashing queue: at most `concurrency` at once, then `queueLength` waiting, then refused at once', async () => {
  let running = 0;
  const gates: Array<() => void> = [];
  const work = {
    hash: async () => 'h',
    verify: () =>
      new Promise<boolean>((resolve) => {
        running++;
        gates.push(() => {
          running--;
          resolve(true);
        });
      }),
  };
  const hasher = new PasswordHasher({ concurrency: 1, queueLength: 1, retryAfterSeconds: 3 }, work);
  const first = hasher.verify('a', 'h');
  const second = hasher.verify('b', 'h');
  assert.deepEqual(hasher.stats(), { active: 1, queued: 1 });
  await assert.rejects(hasher.verify('c', 'h'), (err: unknown) => err instanceof PasswordHashingBusy && err.retryAfterSeconds === 3);
  assert.equal(running, 1);
  gates.shift()!();
  assert.equal(await first, true);
  // the slot went straight to the one waiting
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.equal(running, 1);
  gates.shift()!();
  assert.equal(await second, true);
  assert.deepEqual(hasher.stats(), { active: 0, queued: 0 });
  assert.throws(() => new PasswordHasher({ concurrency: 0 }), RangeError);
});
