/**
 * Console refusals reach telemetry like the public API's: each console entry of
 * REJECTION_REASONS is produced by a real request to the real app, counted in
 * rejections_total under its reason, and named (error_code) in the request's log line.
 * Guards against a console error path that bypasses the one error translation point.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Knex } from 'knex';
import { REJECTION_REASONS, type ErrorCode } from '../../src/api/errors.js';
import { PasswordHasher, SCRYPT_WORK, type PasswordWork } from '../../src/console/passwords.js';
import { buildApp, createServices, type Services } from '../../src/app.js';
import { CONSOLE_ERRORS } from '../../src/console/context.js';
import { totpCode } from '../../src/console/totp.js';
import { createDb } from '../../src/store/db.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { createOrg } from '../../src/store/orgs.js';
import { testConfig } from '../helpers/app.js';
import { capturedLogger } from '../helpers/log-capture.js';
import { agePastGrace, API, consoleUser, login, PASSWORD } from '../helpers/console.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

const { logger, lines } = capturedLogger('info');

/** The real scrypt, except that while `held` is set a check waits for it (and says it began). */
let held: { release: Promise<void>; began: () => void } | undefined;
const heldWork: PasswordWork = {
  hash: (password) => SCRYPT_WORK.hash(password),
  verify: async (password, stored) => {
    const h = held;
    if (h) {
      h.began();
      await h.release;
    }
    return SCRYPT_WORK.verify(password, stored);
  },
};

let database: TestDatabase;
let db: Knex;
let services: Services;
let app: FastifyInstance;
let dataDir: string;
let orgId: string;

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-console-rej-'));
  const config = testConfig(database.url, dataDir, { LOG_LEVEL: 'info' });
  db = createDb(database.url);
  await migrateLatest(db);
  services = await createServices(config, db, logger);
  // An account is locked after 2 failed sign-ins; addresses are never locked here.
  const throttle = {
    account: { slowAfter: 100, lockAfter: 2, lockSeconds: 60, windowSeconds: 60 },
    address: { slowAfter: 1000, lockAfter: 1000, lockSeconds: 60, windowSeconds: 60 },
  };
  // One password-hashing slot and no queue: a test holds the slot to reach PASSWORD_HASHING_BUSY.
  const passwords = new PasswordHasher({ concurrency: 1, queueLength: 0 }, heldWork);
  app = await buildApp({ ...services, console: { throttle, passwords } }, { loggerInstance: logger, sweepAbandoned: false });
  await app.ready();
  orgId = (await createOrg(db, { name: `console-rej-${process.pid}`, balance: null })).id;
});
after(async () => {
  await app?.close();
  await services?.close();
  await db?.destroy();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** rejections_total by reason, from the app's own /metrics. */
async function rejections(): Promise<Map<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  const out = new Map<string, number>();
  for (const m of res.body.matchAll(/^rejections_total\{reason="([a-z_]+)"\} (\d+)$/gm)) out.set(m[1], Number(m[2]));
  return out;
}

/** The one telemetry line ("request") a request wrote, among the lines logged from `from` on. */
function requestLine(from: number): Record<string, unknown> {
  const found = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
  assert.equal(found.length, 1, `one request line: ${lines.slice(from).join('\n')}`);
  return found[0];
}

const reached = new Set<ErrorCode>();

/** Sends the request, expects `code`, and checks its metric and its log line. */
async function expectRefusal(code: ErrorCode, request: InjectOptions & { method: string; url: string }): Promise<void> {
  const reason = REJECTION_REASONS[code];
  assert.ok(reason !== undefined, `${code} is a rejection`);
  const before = await rejections();
  const from = lines.length;
  const res = await app.inject(request);
  assert.equal((JSON.parse(res.body) as { error_code?: string }).error_code, code, `${request.method} ${request.url}: ${res.statusCode} ${res.body}`);
  const after = await rejections();
  assert.equal((after.get(reason) ?? 0) - (before.get(reason) ?? 0), 1, `${code} counts one rejection with reason ${reason}`);
  const line = requestLine(from);
  assert.equal(line.error_code, code, `the request line of ${code} names it: ${JSON.stringify(line)}`);
  assert.equal(line.status_code, res.statusCode);
  reached.add(code);
}

test('every console refusal is counted by reason and logged with its error_code, each console code reached', async () => {
  const viewer = await consoleUser(db, 'viewer@example.com', [{ orgId, role: 'viewer' }]);
  const viewerTokens = await login(app, viewer.email);

  await expectRefusal('UNAUTHENTICATED', { method: 'GET', url: `${API}/me` });
  await expectRefusal('VALIDATION_FAILED', { method: 'POST', url: `${API}/auth/login`, payload: { email: 'a@example.com' } });
  // A cookie session on an unsafe method without the x-csrf-token header.
  await expectRefusal('CSRF_FAILED', { method: 'POST', url: `${API}/auth/refresh`, payload: {}, cookies: { rc_refresh: 'rcr_x', rc_csrf: 'token' } });
  await expectRefusal('INVALID_CREDENTIALS', { method: 'POST', url: `${API}/auth/login`, payload: { email: 'nobody@example.com', password: 'wrong password' } });
  await expectRefusal('INVALID_CREDENTIALS', { method: 'POST', url: `${API}/auth/login`, payload: { email: 'nobody@example.com', password: 'wrong password' } });
  await expectRefusal('LOGIN_THROTTLED', { method: 'POST', url: `${API}/auth/login`, payload: { email: 'nobody@example.com', password: 'wrong password' } });
  await expectRefusal('FORBIDDEN_ROLE', {
    method: 'POST',
    url: `${API}/orgs/${orgId}/keys`,
    headers: { authorization: `Bearer ${viewerTokens.access_token}` },
    payload: { name: 'not allowed', classes: ['*'] },
  });
  const spent = viewerTokens.refresh_token;
  const rotated = await app.inject({ method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: spent } });
  assert.equal(rotated.statusCode, 200, rotated.body);
  await agePastGrace(db, spent); // presented again within its grace it would get the same pair
  await expectRefusal('REFRESH_REUSED', { method: 'POST', url: `${API}/auth/refresh`, payload: { refresh_token: spent } });

  // The second factor: a wrong code, a stale check before creating a key, an organisation that requires it.
  const owner = await consoleUser(db, 'mfa-owner@example.com', [{ orgId, role: 'owner' }]);
  const ownerAuth = { authorization: `Bearer ${(await login(app, owner.email)).access_token}` };
  const { secret } = JSON.parse((await app.inject({ method: 'POST', url: `${API}/me/mfa/totp`, headers: ownerAuth, payload: { password: PASSWORD } })).body) as { secret: string };
  const confirmed = await app.inject({ method: 'POST', url: `${API}/me/mfa/totp/confirm`, headers: ownerAuth, payload: { code: totpCode(secret, Date.now()) } });
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  await expectRefusal('INVALID_MFA_CODE', { method: 'POST', url: `${API}/me/mfa/verify`, headers: ownerAuth, payload: { code: totpCode(secret, Date.now() - 600_000) } });
  await db('console_sessions').where({ user_id: owner.id }).update({ mfa_verified_at: db.raw(`now() - interval '1 hour'`) });
  await expectRefusal('MFA_CHECK_REQUIRED', { method: 'POST', url: `${API}/orgs/${orgId}/keys`, headers: ownerAuth, payload: { name: 'unchecked', classes: ['*'] } });
  assert.equal((await app.inject({ method: 'PUT', url: `${API}/orgs/${orgId}/mfa`, headers: ownerAuth, payload: { required: true } })).statusCode, 200);
  await expectRefusal('MFA_ENROLLMENT_REQUIRED', { method: 'GET', url: `${API}/orgs/${orgId}/keys`, headers: { authorization: `Bearer ${(await login(app, viewer.email)).access_token}` } });

  // A password an operator set (`recog users create`/`set-password`) must be changed before anything else.
  const temporary = await consoleUser(db, 'temporary@example.com', [{ orgId, role: 'member' }]);
  await db('users').where({ id: temporary.id }).update({ password_must_change: true });
  await expectRefusal('PASSWORD_CHANGE_REQUIRED', { method: 'GET', url: `${API}/orgs/${orgId}/keys`, headers: { authorization: `Bearer ${(await login(app, temporary.email)).access_token}` } });

  // The only hashing slot held by one sign-in: the next is turned away at once.
  let release!: () => void;
  let began!: () => void;
  const inside = new Promise<void>((resolve) => (began = resolve));
  held = { release: new Promise<void>((resolve) => (release = resolve)), began };
  const holding = app.inject({ method: 'POST', url: `${API}/auth/login`, payload: { email: viewer.email, password: 'wrong password' } });
  await inside;
  await expectRefusal('PASSWORD_HASHING_BUSY', { method: 'POST', url: `${API}/auth/login`, payload: { email: 'someone@example.com', password: 'wrong password' } });
  held = undefined;
  release();
  assert.equal((await holding).statusCode, 401);

  // Not just the table: every console code that is a rejection was reached above.
  const consoleRejections = CONSOLE_ERRORS.filter((c) => REJECTION_REASONS[c] !== undefined);
  assert.ok(consoleRejections.length >= 7, consoleRejections.join(', '));
  for (const code of consoleRejections) assert.ok(reached.has(code), `${code} (${REJECTION_REASONS[code]}) is reached by a real request`);
});
