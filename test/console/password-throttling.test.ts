/**
 * Throttling of every password check (issue 29), through the real app on real PostgreSQL:
 * a parallel burst of wrong passwords gets no more checks than the policy allows (counted
 * by an instrumented hasher, no timing), addresses rotated within one IPv6 /64 share a
 * bucket, /me/password and accepting an invitation with a password are throttled in the
 * same buckets as sign-in, and a full hashing queue answers 429 at once.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { PasswordHasher, SCRYPT_WORK, type PasswordQueueOptions, type PasswordWork } from '../../src/console/passwords.js';
import { accountSubject, type ThrottlePolicies } from '../../src/console/throttle.js';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, bearer, consoleUser, login } from '../helpers/console.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t?.close();
});

const LOOSE = { slowAfter: 1000, lockAfter: 1000, lockSeconds: 600, windowSeconds: 600 };
const STRICT = (n: number) => ({ slowAfter: n, lockAfter: n, lockSeconds: 600, windowSeconds: 600 });

/** The real scrypt, counted: how many checks reached the password. */
function countingWork(): PasswordWork & { verifies: number } {
  const work = {
    verifies: 0,
    hash: (p: string) => SCRYPT_WORK.hash(p),
    verify: (p: string, stored: string) => {
      work.verifies++;
      return SCRYPT_WORK.verify(p, stored);
    },
  };
  return work;
}

async function withApp(
  throttle: ThrottlePolicies,
  work: PasswordWork,
  queue: Partial<PasswordQueueOptions>,
  body: (app: FastifyInstance) => Promise<void>,
): Promise<void> {
  const app = await buildApp({ ...t.services, console: { throttle, passwords: new PasswordHasher(queue, work) } }, { logger: false, sweepAbandoned: false });
  try {
    await app.ready();
    await body(app);
  } finally {
    await app.close();
  }
}

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> };
function assertError(res: Answer, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(json(res).error_code, code, res.body);
}
function assertThrottled(res: Answer) {
  assertError(res, 429, 'LOGIN_THROTTLED');
  assert.ok(Number(res.headers['retry-after']) > 0, `Retry-After: ${String(res.headers['retry-after'])}`);
}
const loginAt = (app: FastifyInstance, email: string, password: string, ip: string) =>
  app.inject({ method: 'POST', url: `${API}/auth/login`, remoteAddress: ip, payload: { email, password } });

test('a parallel burst of 20 wrong passwords over HTTP: 5 checks (the limit) reach the password, 15 get 429 with Retry-After', async () => {
  const email = 'burst@example.com';
  await consoleUser(t.db, email);
  const work = countingWork();
  await withApp({ account: STRICT(5), address: LOOSE }, work, { concurrency: 2, queueLength: 50 }, async (app) => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const attempt = (password: string) =>
      fetch(`${base}${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) }).then(
        async (r) => ({ statusCode: r.status, body: await r.text(), headers: Object.fromEntries(r.headers) }),
      );
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(`wrong password ${i}`)));
    assert.equal(work.verifies, 5, 'exactly the limit reached the password check');
    const refused = answers.filter((a) => a.statusCode === 429);
    assert.equal(answers.filter((a) => a.statusCode === 401).length, 5, answers.map((a) => a.statusCode).join(','));
    assert.equal(refused.length, 15);
    for (const a of refused) assertThrottled(a);
    // locked now, even for the right password, and without a check
    assertThrottled(await attempt(PASSWORD));
    assert.equal(work.verifies, 5);
    assert.equal((await t.db('login_throttle').where({ subject: accountSubject(email) }).first())?.failures, 5);
  });
});

test('addresses within one IPv6 /64 share a bucket (and an IPv4-mapped address is its IPv4 address)', async () => {
  await consoleUser(t.db, 'six@example.com');
  await withApp({ account: LOOSE, address: STRICT(3) }, SCRYPT_WORK, {}, async (app) => {
    for (let i = 1; i <= 3; i++) assertError(await loginAt(app, `sprayed${i}@example.com`, 'wrong password!', `2001:db8:a:b::${i}`), 401, 'INVALID_CREDENTIALS');
    assertThrottled(await loginAt(app, 'six@example.com', PASSWORD, '2001:db8:a:b:ffff:eeee:dddd:9'));
    assert.equal((await loginAt(app, 'six@example.com', PASSWORD, '2001:db8:a:c::1')).statusCode, 200, 'the next /64 is another bucket');

    for (let i = 1; i <= 3; i++) assertError(await loginAt(app, `mapped${i}@example.com`, 'wrong password!', '::ffff:192.0.2.7'), 401, 'INVALID_CREDENTIALS');
    assertThrottled(await loginAt(app, 'six@example.com', PASSWORD, '192.0.2.7'));
  });
});

test('/me/password is throttled in the account bucket of sign-in', async () => {
  const email = 'changer-throttled@example.com';
  await consoleUser(t.db, email);
  const work = countingWork();
  await withApp({ account: STRICT(3), address: LOOSE }, work, {}, async (app) => {
    const tokens = await login(app, email);
    const change = (current: string) =>
      app.inject({ method: 'POST', url: `${API}/me/password`, headers: bearer(tokens), payload: { current_password: current, new_password: 'a brand new passphrase' } });
    for (let i = 0; i < 3; i++) assertError(await change(`not the password ${i}`), 401, 'INVALID_CREDENTIALS');
    const before = work.verifies;
    assertThrottled(await change(PASSWORD));
    assertThrottled(await loginAt(app, email, PASSWORD, '10.20.0.1'));
    assert.equal(work.verifies, before, 'refused without a check');
    await app.inject({ method: 'GET', url: `${API}/me`, headers: bearer(tokens) }).then((r) => assert.equal(r.statusCode, 200, 'the session itself lives on'));
  });
});

test('accepting an invitation with a password is throttled in the same buckets', async () => {
  const org = await createOrg(t.db, { name: `throttle-invite-${Date.now()}` });
  await consoleUser(t.db, 'inviter@example.com', [{ orgId: org.id, role: 'owner' }]);
  const email = 'invitee-throttled@example.com';
  await consoleUser(t.db, email);
  await withApp({ account: STRICT(3), address: LOOSE }, SCRYPT_WORK, {}, async (app) => {
    const owner = await login(app, 'inviter@example.com');
    const res = await app.inject({ method: 'POST', url: `${API}/orgs/${org.id}/members`, headers: bearer(owner), payload: { email, role: 'member' } });
    assert.equal(res.statusCode, 201, res.body);
    const token = /#\/invite\/(rci_[A-Za-z0-9_-]+)$/.exec(json<{ invitation_url: string }>(res).invitation_url)?.[1];
    assert.ok(token);
    const accept = (password: string) => app.inject({ method: 'POST', url: `${API}/invitations/accept`, payload: { token, password } });
    for (let i = 0; i < 2; i++) assertError(await accept(`not the password ${i}`), 401, 'INVALID_CREDENTIALS');
    assertError(await loginAt(app, email, 'wrong at sign-in', '10.20.0.2'), 401, 'INVALID_CREDENTIALS');
    assertThrottled(await accept(PASSWORD));
    assertThrottled(await loginAt(app, email, PASSWORD, '10.20.0.3'));
  });
});

test('a full hashing queue answers 429 PASSWORD_HASHING_BUSY at once, and that attempt is not counted', async () => {
  await consoleUser(t.db, 'holder@example.com');
  await consoleUser(t.db, 'turned-away@example.com');
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  const work: PasswordWork = {
    hash: (p) => SCRYPT_WORK.hash(p),
    verify: async () => {
      entered();
      await gate;
      return false;
    },
  };
  await withApp({ account: STRICT(3), address: LOOSE }, work, { concurrency: 1, queueLength: 0, retryAfterSeconds: 1 }, async (app) => {
    const holding = loginAt(app, 'holder@example.com', 'wrong password!', '10.30.0.1');
    await inside; // the only slot is taken, the queue holds nothing
    const busy = await loginAt(app, 'turned-away@example.com', PASSWORD, '10.30.0.2');
    assertError(busy, 429, 'PASSWORD_HASHING_BUSY');
    assert.equal(busy.headers['retry-after'], '1');
    const row = await t.db('login_throttle').where({ subject: accountSubject('turned-away@example.com') }).first();
    assert.equal(row?.failures ?? 0, 0, 'an attempt that never reached its check is given back');
    letGo();
    assertError(await holding, 401, 'INVALID_CREDENTIALS');
  });
});
