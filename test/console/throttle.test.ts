/** Sign-in throttling on real PostgreSQL: the slowing phase doubles, then the lock; clearing; subjects apart. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Knex } from 'knex';
import { LoginThrottle, accountSubject, addressSubject } from '../../src/console/throttle.js';
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

test('failures first slow sign-in (1, 2, 4 … s), then lock it; a success clears the account only', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 2, lockAfter: 6, lockSeconds: 900, windowSeconds: 900 },
    address: { slowAfter: 100, lockAfter: 200, lockSeconds: 900, windowSeconds: 900 },
  });
  const account = accountSubject(' Ada@Example.com ');
  assert.equal(account, 'account:ada@example.com');
  const lockedFor = async () => Number((await db('login_throttle').where({ subject: account }).first(db.raw('extract(epoch from (locked_until - now())) as s'))).s);

  await throttle.recordFailure(account, 'account');
  assert.equal(await throttle.retryAfter([account]), 0, 'one failure: no wait');
  await throttle.recordFailure(account, 'account'); // 2nd: waits 1 s
  await throttle.recordFailure(account, 'account'); // 3rd: 2 s
  await throttle.recordFailure(account, 'account'); // 4th: 4 s
  const slow = await lockedFor();
  assert.ok(slow > 0 && slow <= 4, `slowing phase waits at most 4 s (got ${slow})`);
  assert.ok((await throttle.retryAfter([account, addressSubject('10.1.1.1')])) >= 1);
  await throttle.recordFailure(account, 'account');
  await throttle.recordFailure(account, 'account'); // 6th: locked
  const locked = await lockedFor();
  assert.ok(locked > 800, `locked for the lock time (got ${locked})`);

  const address = addressSubject('10.1.1.1');
  await throttle.recordFailure(address, 'address');
  await throttle.clear(account);
  assert.equal(await throttle.retryAfter([account]), 0);
  assert.equal((await db('login_throttle').where({ subject: address }).first())?.failures, 1, 'the address keeps its count');
});

test('a failure after the window starts a new count', async () => {
  const throttle = new LoginThrottle(db, {
    account: { slowAfter: 2, lockAfter: 3, lockSeconds: 900, windowSeconds: 60 },
    address: { slowAfter: 100, lockAfter: 200, lockSeconds: 900, windowSeconds: 60 },
  });
  const s = accountSubject('old@example.com');
  await throttle.recordFailure(s, 'account');
  await throttle.recordFailure(s, 'account');
  await db('login_throttle').where({ subject: s }).update({ window_started_at: db.raw(`now() - interval '2 minutes'`), locked_until: null });
  await throttle.recordFailure(s, 'account');
  assert.equal((await db('login_throttle').where({ subject: s }).first()).failures, 1);
  assert.equal(await throttle.retryAfter([s]), 0);
});

test('rows of windows older than a day that lock nothing are forgotten', async () => {
  const throttle = new LoginThrottle(db);
  const stale = addressSubject('10.9.9.9');
  const lockedStale = addressSubject('10.9.9.8');
  await throttle.recordFailure(stale, 'address');
  await throttle.recordFailure(lockedStale, 'address');
  await db('login_throttle').where({ subject: stale }).update({ window_started_at: db.raw(`now() - interval '2 days'`) });
  await db('login_throttle').where({ subject: lockedStale }).update({ window_started_at: db.raw(`now() - interval '2 days'`), locked_until: db.raw(`now() + interval '1 hour'`) });
  await throttle.recordFailure(addressSubject('10.9.9.7'), 'address');
  assert.equal(await db('login_throttle').where({ subject: stale }).first(), undefined);
  assert.ok(await db('login_throttle').where({ subject: lockedStale }).first(), 'a live lock stays');
});
