/**
 * The console API's real answers, success and error, of every operation, validated against
 * /openapi.json as served: each answer's status is documented for its operation and its body
 * matches that status's schema. Also: every console route is in the document, and every
 * status an operation declares has its schema. If the document and the behaviour drift
 * apart (an undocumented 401, a field the schema lacks), this fails.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { totpCode } from '../../src/console/totp.js';
import { createOrg } from '../../src/store/orgs.js';
import { createUser } from '../../src/store/users.js';
import { hashPassword } from '../../src/console/passwords.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { API, PASSWORD, agePastGrace, bearer, consoleUser, login, type Tokens } from '../helpers/console.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
interface Operation {
  operationId?: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

let t: TestApp;
let seed: TestKey;
let doc: { paths: Record<string, Partial<Record<Method, Operation>>> };
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// The fake clock TOTP codes are checked against: each code is used once, so each use moves it on.
let now = Date.parse('2026-11-25T12:00:00Z');
const tick = () => (now += 30_000);
const who: Record<'owner' | 'admin' | 'member' | 'viewer' | 'outsider', Tokens> = {} as never;
const ids: Record<string, string> = {};
/** `${method} ${path}` → the statuses whose answers were checked. */
const seen = new Map<string, Set<number>>();

before(async () => {
  t = await buildTestApp({}, {
    console: {
      clock: () => now,
      // Low for one account, so a lock is reached quickly; high for the address every test request shares.
      throttle: { account: { slowAfter: 3, lockAfter: 3, lockSeconds: 600, windowSeconds: 600 }, address: { slowAfter: 1000, lockAfter: 1000, lockSeconds: 600, windowSeconds: 600 } },
    },
  });
  seed = await t.newKey();
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const) ids[role] = (await consoleUser(t.db, `${role}@example.com`, [{ orgId: seed.orgId, role }])).id;
  ids.outsider = (await consoleUser(t.db, 'outsider@example.com')).id;
  for (const w of Object.keys(ids) as Array<keyof typeof who>) who[w] = await login(t.app, `${w}@example.com`);
  doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  ajv.addSchema({ ...doc, $id: 'openapi' });
});
after(async () => {
  await t?.close();
});

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const validator = (ref: string) => ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });

interface Call {
  params?: Record<string, string>;
  query?: string;
  payload?: unknown;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  as?: Tokens | keyof typeof who | null;
}

/**
 * One real request to a console operation (`path` as the document writes it), its answer
 * checked against the document: the status is one the operation declares, and the body
 * (each line, for JSON lines) validates against that status's schema; a 204 has no body.
 */
async function call(method: Method, path: string, c: Call = {}) {
  const url = API + path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(c.params?.[name] ?? assert.fail(`no ${name} for ${path}`))) + (c.query ? `?${c.query}` : '');
  const tokens = typeof c.as === 'string' ? who[c.as] : c.as;
  const res = await t.app.inject({
    method: method.toUpperCase() as 'GET',
    url,
    headers: { ...(tokens ? bearer(tokens) : {}), ...c.headers },
    ...(c.cookies ? { cookies: c.cookies } : {}),
    ...(c.payload !== undefined ? { payload: c.payload as object } : {}),
  });
  const docPath = API + path;
  const op = doc.paths[docPath]?.[method];
  assert.ok(op, `${method.toUpperCase()} ${docPath} is in the document`);
  const documented = op.responses[String(res.statusCode)];
  assert.ok(documented, `${method.toUpperCase()} ${path} answered ${res.statusCode}, which it does not document: ${res.body}`);
  const base = ['paths', docPath, method, 'responses', String(res.statusCode), 'content'];
  const type = String(res.headers['content-type'] ?? '').split(';')[0];
  if (res.statusCode === 204) {
    assert.equal(res.body, '');
    assert.equal(documented.content, undefined, `${path} 204 documents no body`);
  } else if (type === 'application/x-ndjson') {
    const validate = validator(`openapi#/${pointer(...base, 'application/x-ndjson', 'schema')}`);
    for (const line of res.body.split('\n').filter((l) => l !== '')) {
      assert.ok(validate(JSON.parse(line)), `${method.toUpperCase()} ${path} line ${line}\n${JSON.stringify(validate.errors, null, 1)}`);
    }
  } else {
    assert.equal(type, 'application/json', `${path} ${res.statusCode} content type`);
    const validate = validator(`openapi#/${pointer(...base, 'application/json', 'schema')}`);
    assert.ok(validate(json(res)), `${method.toUpperCase()} ${path} ${res.statusCode} ${res.body}\n${JSON.stringify(validate.errors, null, 1)}`);
  }
  const key = `${method} ${docPath}`;
  seen.set(key, (seen.get(key) ?? new Set()).add(res.statusCode));
  return res;
}

/** `call`, then the status and (for an error) the code it must have. */
async function expect(status: number, code: string | null, method: Method, path: string, c: Call = {}) {
  const res = await call(method, path, c);
  assert.equal(res.statusCode, status, `${method.toUpperCase()} ${path}: ${res.body}`);
  if (code !== null) assert.equal(json(res).error_code, code, res.body);
  return res;
}

/** Every route of the app as `method /path/{param}`, read from Fastify's route tree (HEAD aside: Fastify adds it to each GET). */
function registeredRoutes(): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...m[1]].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of m[3]?.split(', ') ?? []) if (method !== 'HEAD') out.push(`${method.toLowerCase()} ${path}`);
  }
  return out;
}

test('every console route is in the document, with an operationId and a schema for each status it declares', async () => {
  const routes = registeredRoutes().filter((r) => r.split(' ')[1].startsWith(`${API}/`));
  assert.ok(routes.length >= 30, `the console's routes were found: ${routes.join(', ')}`);
  const documented = Object.entries(doc.paths).flatMap(([p, item]) => (p.startsWith(API) ? Object.keys(item).map((m) => `${m} ${p}`) : []));
  assert.deepEqual([...routes].sort(), [...documented].sort(), 'the routes under /console/api/v1 and the documented operations are the same');

  const ops = new Set<string>();
  for (const route of documented) {
    const [method, p] = route.split(' ') as [Method, string];
    const op = doc.paths[p][method]!;
    assert.match(op.operationId ?? '', /^console[A-Z]/, `${route} has an operationId`);
    assert.ok(!ops.has(op.operationId!), `${op.operationId} is unique`);
    ops.add(op.operationId!);
    const statuses = Object.keys(op.responses);
    assert.ok(statuses.some((s) => s.startsWith('2')), `${route} documents its success`);
    for (const s of ['401', '500', '503']) if (!p.startsWith(`${API}/auth/`) && !p.startsWith(`${API}/invitations/`)) assert.ok(statuses.includes(s), `${route} documents ${s}`);
    for (const [status, r] of Object.entries(op.responses)) {
      if (status === '204') {
        assert.equal(r.content, undefined, `${route} 204`);
        continue;
      }
      assert.ok(r.content?.['application/json']?.schema, `${route} ${status} has a JSON schema`);
      if (!status.startsWith('2')) {
        const schema = r.content['application/json'].schema as { properties?: Record<string, { enum?: string[] }> };
        assert.ok((schema.properties?.error_code?.enum ?? []).length > 0, `${route} ${status} lists its error codes`);
      }
    }
  }
});

test('sign-in, second factor, refresh, sign-out, the account: success and error answers match the document', async () => {
  // login
  await expect(200, null, 'post', '/auth/login', { payload: { email: 'member@example.com', password: PASSWORD } });
  const cookieLogin = await expect(200, null, 'post', '/auth/login', { payload: { email: 'member@example.com', password: PASSWORD }, headers: { 'x-console-session': 'cookie' } });
  assert.equal(json(cookieLogin).access_token, undefined);
  await expect(401, 'INVALID_CREDENTIALS', 'post', '/auth/login', { payload: { email: 'member@example.com', password: 'not the password' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/auth/login', { payload: { email: 'member@example.com' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/auth/login', { payload: '{"email":', headers: { 'content-type': 'application/json' } });
  await expect(413, 'PAYLOAD_TOO_LARGE', 'post', '/auth/login', { payload: { email: 'x'.repeat(70_000), password: 'y' } });
  await consoleUser(t.db, 'locked@example.com');
  for (let i = 0; i < 3; i++) await expect(401, 'INVALID_CREDENTIALS', 'post', '/auth/login', { payload: { email: 'locked@example.com', password: 'wrong password!' } });
  await expect(429, 'LOGIN_THROTTLED', 'post', '/auth/login', { payload: { email: 'locked@example.com', password: PASSWORD } });

  // cookies: a browser's session, refreshed and ended with the CSRF header
  const jar = Object.fromEntries(cookieLogin.cookies.map((c) => [c.name, c.value]));
  await expect(403, 'CSRF_FAILED', 'post', '/auth/refresh', { cookies: jar, payload: {} });
  await expect(200, null, 'post', '/auth/refresh', { cookies: jar, headers: { 'x-csrf-token': jar.rc_csrf }, payload: {} });
  await expect(403, 'CSRF_FAILED', 'post', '/auth/logout', { cookies: { rc_access: jar.rc_access, rc_csrf: jar.rc_csrf } });

  // refresh by body
  const session = await login(t.app, 'member@example.com');
  const rotated = json<Tokens>(await expect(200, null, 'post', '/auth/refresh', { payload: { refresh_token: session.refresh_token } }));
  assert.ok(rotated.access_token && rotated.refresh_token);
  await agePastGrace(t.db, session.refresh_token);
  await expect(401, 'REFRESH_REUSED', 'post', '/auth/refresh', { payload: { refresh_token: session.refresh_token } });
  await expect(401, 'UNAUTHENTICATED', 'post', '/auth/refresh', { payload: { refresh_token: 'rcr_nothing' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/auth/refresh', { payload: { refresh_token: 5 } });

  // logout
  await expect(204, null, 'post', '/auth/logout', { as: await login(t.app, 'member@example.com') });
  await expect(401, 'UNAUTHENTICATED', 'post', '/auth/logout');
  await expect(400, 'VALIDATION_FAILED', 'post', '/auth/logout', { payload: { refresh_token: 5 } });

  // me, sessions, the security log
  const me = json<{ password_must_change: boolean; memberships: unknown[] }>(await expect(200, null, 'get', '/me', { as: 'owner' }));
  assert.equal(me.password_must_change, false);
  assert.equal(me.memberships.length, 1);
  await expect(401, 'UNAUTHENTICATED', 'get', '/me', { headers: { 'x-api-key': seed.key } });
  const list = json<{ sessions: Array<{ id: string; current: boolean; expires_at: string }> }>(await expect(200, null, 'get', '/sessions', { as: 'viewer' }));
  assert.ok(list.sessions.every((s) => typeof s.expires_at === 'string'));
  await expect(401, 'UNAUTHENTICATED', 'get', '/sessions');
  const spare = await login(t.app, 'viewer@example.com');
  const spareId = json<{ sessions: Array<{ id: string; current: boolean }> }>(await call('get', '/sessions', { as: spare })).sessions.find((s) => s.current)!.id;
  await expect(204, null, 'delete', '/sessions/{id}', { params: { id: spareId }, as: 'viewer' });
  await expect(404, 'NOT_FOUND', 'delete', '/sessions/{id}', { params: { id: spareId }, as: 'admin' });
  await expect(400, 'VALIDATION_FAILED', 'delete', '/sessions/{id}', { params: { id: 'x'.repeat(65) }, as: 'viewer' });
  await expect(200, null, 'get', '/me/audit', { as: 'member', query: 'limit=5' });
  await expect(200, null, 'get', '/me/audit', { as: 'member', query: 'format=jsonl' });
  await expect(400, 'VALIDATION_FAILED', 'get', '/me/audit', { as: 'member', query: 'since=yesterday' });
  await expect(401, 'UNAUTHENTICATED', 'get', '/me/audit');

  // a temporary password: only /me and the change are open
  await createUser(t.db, { email: 'temporary@example.com', passwordHash: await hashPassword(PASSWORD), passwordMustChange: true });
  const temporary = await login(t.app, 'temporary@example.com');
  assert.equal(json<{ password_must_change: boolean }>(await expect(200, null, 'get', '/me', { as: temporary })).password_must_change, true);
  await expect(403, 'PASSWORD_CHANGE_REQUIRED', 'get', '/sessions', { as: temporary });
  await expect(403, 'PASSWORD_CHANGE_REQUIRED', 'get', '/me/mfa', { as: temporary });
  await expect(401, 'INVALID_CREDENTIALS', 'post', '/me/password', { as: temporary, payload: { current_password: 'not it', new_password: 'a much better passphrase 42' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/password', { as: temporary, payload: { current_password: PASSWORD, new_password: 'short' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/password', { as: temporary, payload: { current_password: PASSWORD } });
  const changed = json<Tokens>(await expect(200, null, 'post', '/me/password', { as: temporary, payload: { current_password: PASSWORD, new_password: 'a much better passphrase 42' } }));
  await expect(200, null, 'get', '/sessions', { as: changed });
  await expect(401, 'UNAUTHENTICATED', 'post', '/me/password', { payload: { current_password: PASSWORD, new_password: 'a much better passphrase 43' } });
});

test('two-factor authentication: enrollment, checks, sign-in, the organisation requirement, match the document', async () => {
  const org = await createOrg(t.db, { name: 'mfa-org' });
  await consoleUser(t.db, 'mfa@example.com', [{ orgId: org.id, role: 'owner' }]);
  await consoleUser(t.db, 'plain@example.com', [{ orgId: org.id, role: 'member' }]);
  const tokens = await login(t.app, 'mfa@example.com');
  const unchecked = await login(t.app, 'mfa@example.com'); // signed in before enrollment: never checked
  const plain = await login(t.app, 'plain@example.com');
  const p = { org: org.name };

  assert.equal(json<{ totp: string }>(await expect(200, null, 'get', '/me/mfa', { as: tokens })).totp, 'none');
  await expect(401, 'UNAUTHENTICATED', 'get', '/me/mfa');
  await expect(409, 'CONFLICT', 'post', '/me/mfa/verify', { as: tokens, payload: { code: '123456' } });
  await expect(409, 'CONFLICT', 'post', '/me/mfa/totp/confirm', { as: tokens, payload: { code: '123456' } });
  await expect(401, 'INVALID_CREDENTIALS', 'post', '/me/mfa/totp', { as: tokens, payload: { password: 'not the password' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/mfa/totp', { as: tokens, payload: {} });
  const { secret } = json<{ secret: string; otpauth_uri: string }>(await expect(200, null, 'post', '/me/mfa/totp', { as: tokens, payload: { password: PASSWORD } }));
  await expect(401, 'INVALID_MFA_CODE', 'post', '/me/mfa/totp/confirm', { as: tokens, payload: { code: totpCode(secret, now - 300_000) } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/mfa/totp/confirm', { as: tokens, payload: { code: 1 } });
  const confirmed = json<{ recovery_codes: string[] }>(await expect(200, null, 'post', '/me/mfa/totp/confirm', { as: tokens, payload: { code: totpCode(secret, now) } }));
  assert.equal(confirmed.recovery_codes.length, 10);
  await expect(409, 'CONFLICT', 'post', '/me/mfa/totp', { as: tokens, payload: { password: PASSWORD } });
  tick();
  await expect(200, null, 'post', '/me/mfa/verify', { as: tokens, payload: { code: totpCode(secret, now) } });
  await expect(401, 'INVALID_MFA_CODE', 'post', '/me/mfa/verify', { as: tokens, payload: { code: totpCode(secret, now) } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/mfa/verify', { as: tokens, payload: {} });

  // a sign-in is now a challenge, then a code
  const challenge = json<{ mfa_required: boolean; mfa_token: string }>(await expect(200, null, 'post', '/auth/login', { payload: { email: 'mfa@example.com', password: PASSWORD } }));
  assert.equal(challenge.mfa_required, true);
  await expect(401, 'INVALID_MFA_CODE', 'post', '/auth/mfa', { payload: { mfa_token: challenge.mfa_token, code: totpCode(secret, now - 300_000) } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/auth/mfa', { payload: { mfa_token: challenge.mfa_token } });
  tick();
  const signedIn = json<Tokens>(await expect(200, null, 'post', '/auth/mfa', { payload: { mfa_token: challenge.mfa_token, code: totpCode(secret, now) } }));

  // keys need a fresh check; the organisation's requirement
  await expect(403, 'MFA_CHECK_REQUIRED', 'post', '/orgs/{org}/keys', { params: p, as: unchecked, payload: { name: 'k', classes: ['*'] } });
  await expect(201, null, 'post', '/orgs/{org}/keys', { params: p, as: signedIn, payload: { name: 'k', classes: ['*'] } });
  // an owner without a second factor cannot require one
  await expect(403, 'MFA_ENROLLMENT_REQUIRED', 'put', '/orgs/{org}/mfa', { params: { org: seed.orgName }, as: 'owner', payload: { required: true } });
  await expect(404, 'NOT_FOUND', 'put', '/orgs/{org}/mfa', { params: p, as: 'owner', payload: { required: true } });
  await expect(403, 'FORBIDDEN_ROLE', 'put', '/orgs/{org}/mfa', { params: p, as: plain, payload: { required: true } });
  await expect(400, 'VALIDATION_FAILED', 'put', '/orgs/{org}/mfa', { params: p, as: signedIn, payload: { required: 'yes' } });
  assert.equal(json<{ mfa_required: boolean }>(await expect(200, null, 'put', '/orgs/{org}/mfa', { params: p, as: signedIn, payload: { required: true } })).mfa_required, true);
  await expect(200, null, 'get', '/orgs/{org}/mfa', { params: p, as: signedIn });
  await expect(403, 'MFA_ENROLLMENT_REQUIRED', 'get', '/orgs/{org}/mfa', { params: p, as: plain });
  await expect(403, 'MFA_ENROLLMENT_REQUIRED', 'get', '/orgs/{org}', { params: p, as: plain });
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}/mfa', { params: p, as: 'outsider' });
  await expect(200, null, 'put', '/orgs/{org}/mfa', { params: p, as: signedIn, payload: { required: false } });

  // turning it off: the password and a code
  await expect(401, 'INVALID_CREDENTIALS', 'post', '/me/mfa/totp/disable', { as: signedIn, payload: { password: 'not the password', code: '000000' } });
  tick();
  await expect(401, 'INVALID_MFA_CODE', 'post', '/me/mfa/totp/disable', { as: signedIn, payload: { password: PASSWORD, code: totpCode(secret, now - 300_000) } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/me/mfa/totp/disable', { as: signedIn, payload: { code: '000000' } });
  await expect(204, null, 'post', '/me/mfa/totp/disable', { as: signedIn, payload: { password: PASSWORD, recovery_code: confirmed.recovery_codes[0] } });
  await expect(409, 'CONFLICT', 'post', '/me/mfa/totp/disable', { as: signedIn, payload: { password: PASSWORD, code: '000000' } });
  await expect(403, 'PASSWORD_CHANGE_REQUIRED', 'get', '/orgs/{org}/mfa', { params: p, as: await temporarySession() });
});

/** A session of a user whose password an operator set (every organisation route refuses it). */
async function temporarySession(): Promise<Tokens> {
  const email = `temp-${Date.now()}@example.com`;
  await createUser(t.db, { email, passwordHash: await hashPassword(PASSWORD), passwordMustChange: true });
  return login(t.app, email);
}

test('the organisation, keys, usage, requests, feedback: success and error answers match the document', async () => {
  const org = { org: seed.orgName };
  const o = (extra: Record<string, string> = {}) => ({ ...org, ...extra });
  const res = json<{ role: string; balance: number | null }>(await expect(200, null, 'get', '/orgs/{org}', { params: o(), as: 'viewer' }));
  assert.equal(res.role, 'viewer');
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}', { params: o(), as: 'outsider' });
  await expect(401, 'UNAUTHENTICATED', 'get', '/orgs/{org}', { params: o() });
  // over the schema's bound, however long: the route's own code, never a refusal before routing
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}', { params: { org: 'x'.repeat(5000) }, as: 'owner' });
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}/keys/{id}', { params: { org: seed.orgName, id: 'x'.repeat(65) }, as: 'owner' });
  await expect(403, 'PASSWORD_CHANGE_REQUIRED', 'get', '/orgs/{org}', { params: o(), as: await temporarySession() });

  await expect(200, null, 'get', '/orgs/{org}/keys', { params: o(), as: 'viewer' });
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}/keys', { params: o(), as: 'outsider' });
  const created = json<{ key: { id: string; used_this_month: number; rate_limit_is_default: boolean }; secret: string }>(
    await expect(201, null, 'post', '/orgs/{org}/keys', { params: o(), as: 'member', payload: { name: 'doc', classes: ['*'], rate_limit_per_minute: 1 } }),
  );
  assert.equal(created.key.used_this_month, 0);
  assert.equal(created.key.rate_limit_is_default, false);
  await expect(403, 'FORBIDDEN_ROLE', 'post', '/orgs/{org}/keys', { params: o(), as: 'viewer', payload: { name: 'x', classes: ['*'] } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/orgs/{org}/keys', { params: o(), as: 'member', payload: { name: 'x', classes: ['unicorn'] } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/orgs/{org}/keys', { params: o(), as: 'member', payload: { name: 'x' } });
  await expect(413, 'PAYLOAD_TOO_LARGE', 'post', '/orgs/{org}/keys', { params: o(), as: 'member', payload: { name: 'x', classes: ['*'], description: 'd'.repeat(70_000) } });
  const login_ = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'member@example.com', password: PASSWORD } });
  const jar = Object.fromEntries(login_.cookies.map((c) => [c.name, c.value]));
  await expect(403, 'CSRF_FAILED', 'post', '/orgs/{org}/keys', { params: o(), cookies: jar, payload: { name: 'x', classes: ['*'] } });

  const k = o({ id: created.key.id });
  await expect(200, null, 'get', '/orgs/{org}/keys/{id}', { params: k, as: 'viewer' });
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}/keys/{id}', { params: o({ id: 'no-such-key' }), as: 'viewer' });
  await expect(200, null, 'patch', '/orgs/{org}/keys/{id}', { params: k, as: 'member', payload: { description: 'documented' } });
  await expect(400, 'VALIDATION_FAILED', 'patch', '/orgs/{org}/keys/{id}', { params: k, as: 'member', payload: {} });
  await expect(403, 'FORBIDDEN_ROLE', 'patch', '/orgs/{org}/keys/{id}', { params: k, as: 'viewer', payload: { name: 'x' } });
  for (const action of ['suspend', 'resume'] as const) {
    await expect(200, null, 'post', `/orgs/{org}/keys/{id}/${action}`, { params: k, as: 'member' });
    await expect(403, 'FORBIDDEN_ROLE', 'post', `/orgs/{org}/keys/{id}/${action}`, { params: k, as: 'viewer' });
  }

  // a DONE request, a refused one (rate limit 1), a rating: then usage, requests and feedback have something to show
  const image = readFixture('basketball1.png').toString('base64');
  const done = await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': created.secret }, payload: { external_id: 'doc-1', image_base64: image } });
  assert.equal(done.statusCode, 200, done.body);
  await t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': created.secret }, payload: { external_id: 'doc-2', image_base64: image } });
  const requestId = json<{ request_id: string }>(done).request_id;
  const rated = await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': created.secret }, payload: { request_id: requestId, rating: 1 } });
  assert.equal(rated.statusCode, 200, rated.body);
  const usage = json<{ days: unknown[]; quota: { used: number } }>(await expect(200, null, 'get', '/orgs/{org}/usage', { params: o(), as: 'viewer', query: `days=3&key_id=${created.key.id}` }));
  assert.equal(usage.days.length, 3);
  await expect(200, null, 'get', '/orgs/{org}/usage', { params: o(), as: 'viewer' });
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}/usage', { params: o(), as: 'viewer', query: 'days=9999' });
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}/usage', { params: o(), as: 'viewer', query: `key_id=${(await t.newKey()).id}` });
  const requests = json<{ requests: Array<{ id: string; response_code: number | null; image_url: string | null; results: unknown[] }> }>(
    await expect(200, null, 'get', '/orgs/{org}/keys/{id}/requests', { params: k, as: 'viewer', query: 'limit=5' }),
  );
  assert.equal(requests.requests[0].id, requestId);
  assert.equal(requests.requests[0].response_code, 200);
  assert.ok(requests.requests[0].results.length > 0);
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}/keys/{id}/requests', { params: k, as: 'viewer', query: 'limit=0' });
  await expect(200, null, 'get', '/orgs/{org}/feedback', { params: o(), as: 'viewer', query: 'days=3' });
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}/feedback', { params: o(), as: 'viewer', query: 'days=x' });

  await expect(403, 'FORBIDDEN_ROLE', 'post', '/orgs/{org}/keys/{id}/revoke', { params: k, as: 'viewer' });
  await expect(200, null, 'post', '/orgs/{org}/keys/{id}/revoke', { params: k, as: 'admin' });
  await expect(409, 'CONFLICT', 'post', '/orgs/{org}/keys/{id}/resume', { params: k, as: 'owner' });
  await expect(409, 'CONFLICT', 'patch', '/orgs/{org}/keys/{id}', { params: k, as: 'owner', payload: { name: 'again' } });
  await expect(409, 'CONFLICT', 'post', '/orgs/{org}/keys/{id}/suspend', { params: k, as: 'owner' });
});

test('members, invitations and the audit log: success and error answers match the document', async () => {
  const org = await createOrg(t.db, { name: 'people-org' });
  const o = (extra: Record<string, string> = {}) => ({ org: org.name, ...extra });
  await consoleUser(t.db, 'boss@example.com', [{ orgId: org.id, role: 'owner' }]);
  const boss = await login(t.app, 'boss@example.com');
  const helper = await consoleUser(t.db, 'helper@example.com', [{ orgId: org.id, role: 'admin' }]);
  const helperTokens = await login(t.app, 'helper@example.com');
  const reader = await consoleUser(t.db, 'reader@example.com', [{ orgId: org.id, role: 'viewer' }]);
  const readerTokens = await login(t.app, 'reader@example.com');

  await expect(200, null, 'get', '/orgs/{org}/members', { params: o(), as: readerTokens });
  await expect(404, 'NOT_FOUND', 'get', '/orgs/{org}/members', { params: o(), as: 'outsider' });

  // invitations: a link (no SMTP here), inspected and accepted by a new account and an existing one
  const invite = (email: string, role = 'viewer', as: Tokens = boss) => call('post', '/orgs/{org}/members', { params: o(), as, payload: { email, role } });
  const fresh = json<{ delivered: string; invitation_url: string; invitation: { id: string } }>(await invite('newcomer@example.com'));
  assert.equal(fresh.delivered, 'link');
  const token = (url: string) => url.slice(url.indexOf('#/invite/') + '#/invite/'.length);
  await expect(403, 'FORBIDDEN_ROLE', 'post', '/orgs/{org}/members', { params: o(), as: helperTokens, payload: { email: 'wannabe@example.com', role: 'owner' } });
  await expect(403, 'FORBIDDEN_ROLE', 'post', '/orgs/{org}/members', { params: o(), as: readerTokens, payload: { email: 'x@example.com', role: 'viewer' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/orgs/{org}/members', { params: o(), as: boss, payload: { email: 'not an address', role: 'viewer' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/orgs/{org}/members', { params: o(), as: boss, payload: { email: 'x@example.com', role: 'king' } });
  await expect(200, null, 'get', '/orgs/{org}/invitations', { params: o(), as: helperTokens });
  await expect(403, 'FORBIDDEN_ROLE', 'get', '/orgs/{org}/invitations', { params: o(), as: readerTokens });

  const info = json<{ invitation: { new_account: boolean } }>(await expect(200, null, 'post', '/invitations/inspect', { payload: { token: token(fresh.invitation_url) } }));
  assert.equal(info.invitation.new_account, true);
  await expect(404, 'NOT_FOUND', 'post', '/invitations/inspect', { payload: { token: 'rci_nothing' } });
  await expect(400, 'VALIDATION_FAILED', 'post', '/invitations/inspect', { payload: {} });
  await expect(400, 'VALIDATION_FAILED', 'post', '/invitations/accept', { payload: { token: token(fresh.invitation_url) } });
  await expect(200, null, 'post', '/invitations/accept', { payload: { token: token(fresh.invitation_url), new_password: 'a fine new passphrase 7' } });
  await expect(404, 'NOT_FOUND', 'post', '/invitations/accept', { payload: { token: token(fresh.invitation_url), new_password: 'a fine new passphrase 7' } });
  const existing = json<{ invitation_url: string }>(await invite('outsider@example.com'));
  await expect(401, 'UNAUTHENTICATED', 'post', '/invitations/accept', { payload: { token: token(existing.invitation_url) } });
  await expect(401, 'INVALID_CREDENTIALS', 'post', '/invitations/accept', { payload: { token: token(existing.invitation_url), password: 'not the password' } });
  await expect(403, 'PASSWORD_CHANGE_REQUIRED', 'post', '/invitations/accept', { as: await temporarySession(), payload: { token: token(existing.invitation_url) } });
  await expect(200, null, 'post', '/invitations/accept', { as: 'outsider', payload: { token: token(existing.invitation_url) } });

  const revocable = json<{ invitation: { id: string } }>(await invite('maybe@example.com'));
  await expect(403, 'FORBIDDEN_ROLE', 'delete', '/orgs/{org}/invitations/{id}', { params: o({ id: revocable.invitation.id }), as: readerTokens });
  await expect(204, null, 'delete', '/orgs/{org}/invitations/{id}', { params: o({ id: revocable.invitation.id }), as: helperTokens });
  await expect(404, 'NOT_FOUND', 'delete', '/orgs/{org}/invitations/{id}', { params: o({ id: revocable.invitation.id }), as: helperTokens });

  // roles
  const changed = json<{ member: { role: string } }>(await expect(200, null, 'patch', '/orgs/{org}/members/{userId}', { params: o({ userId: reader.id }), as: helperTokens, payload: { role: 'member' } }));
  assert.equal(changed.member.role, 'member');
  await expect(403, 'FORBIDDEN_ROLE', 'patch', '/orgs/{org}/members/{userId}', { params: o({ userId: helper.id }), as: readerTokens, payload: { role: 'viewer' } });
  await expect(409, 'CONFLICT', 'patch', '/orgs/{org}/members/{userId}', { params: o({ userId: (await idOf('boss@example.com'))! }), as: boss, payload: { role: 'admin' } });
  await expect(404, 'NOT_FOUND', 'patch', '/orgs/{org}/members/{userId}', { params: o({ userId: '00000000-0000-4000-8000-000000000000' }), as: boss, payload: { role: 'admin' } });
  await expect(400, 'VALIDATION_FAILED', 'patch', '/orgs/{org}/members/{userId}', { params: o({ userId: reader.id }), as: boss, payload: {} });
  await expect(409, 'CONFLICT', 'delete', '/orgs/{org}/members/{userId}', { params: o({ userId: (await idOf('boss@example.com'))! }), as: boss });
  await expect(403, 'FORBIDDEN_ROLE', 'delete', '/orgs/{org}/members/{userId}', { params: o({ userId: helper.id }), as: readerTokens });
  await expect(204, null, 'delete', '/orgs/{org}/members/{userId}', { params: o({ userId: reader.id }), as: helperTokens });

  // the audit log: a page, JSON lines, filters
  const page = json<{ entries: Array<{ action: string }> }>(await expect(200, null, 'get', '/orgs/{org}/audit', { params: o(), as: helperTokens }));
  assert.ok(page.entries.some((e) => e.action === 'invitation.accept'));
  const lines = await expect(200, null, 'get', '/orgs/{org}/audit', { params: o(), as: boss, query: 'format=jsonl' });
  assert.ok(lines.body.split('\n').filter(Boolean).length >= page.entries.length);
  await expect(400, 'VALIDATION_FAILED', 'get', '/orgs/{org}/audit', { params: o(), as: boss, query: 'action=drop%20table' });
  await expect(403, 'FORBIDDEN_ROLE', 'get', '/orgs/{org}/audit', { params: { org: seed.orgName }, as: 'viewer' });
});

async function idOf(email: string): Promise<string | undefined> {
  return (await t.db('users').whereRaw('lower(email) = lower(?)', [email]).first<{ id: string } | undefined>('id'))?.id;
}

test('every console operation was answered here at least once with success and once with an error', () => {
  const missing: string[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    if (!p.startsWith(API)) continue;
    for (const method of Object.keys(item)) {
      const statuses = [...(seen.get(`${method} ${p}`) ?? [])];
      if (!statuses.some((s) => s < 300)) missing.push(`${method.toUpperCase()} ${p}: no success`);
      if (!statuses.some((s) => s >= 400)) missing.push(`${method.toUpperCase()} ${p}: no error`);
    }
  }
  assert.deepEqual(missing, []);
});
