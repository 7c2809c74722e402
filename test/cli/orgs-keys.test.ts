import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Knex } from 'knex';
import { keysCreate, keysList, keysSetStatus, keysShow, keysUpdate, parseClasses, type KeyDeps } from '../../src/cli/commands/keys.js';
import { dbMigrate } from '../../src/cli/commands/db.js';
import { orgsBalance, orgsCreate, orgsList, orgsSetStatus } from '../../src/cli/commands/orgs.js';
import { createDb } from '../../src/store/db.js';
import { hashApiKey } from '../../src/store/keys.js';
import { migrateLatest } from '../../src/store/migrate.js';
import { REPO_ROOT } from '../helpers/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

const run = promisify(execFile);
const LABELS = ['person', 'sports ball', 'dog', 'cat'];

let database: TestDatabase;
let db: Knex;
let deps: KeyDeps;

before(async () => {
  database = await createTestDatabase();
  db = createDb(database.url);
  await migrateLatest(db);
  deps = { db, labels: async () => LABELS, defaultMonthlyQuota: 10_000 };
});
after(async () => {
  await db.destroy();
  await database.drop();
});

test('db migrate: up to date after the first run, and reports every applied migration', async () => {
  const result = await dbMigrate(db);
  assert.deepEqual(result.applied, []);
  assert.ok(result.current.includes('0001_initial'));
});

describe('orgs', () => {
  test('create, list, suspend/resume by name or id, balance set/add', async () => {
    const o = await orgsCreate(db, 'acme', { balance: '5' });
    assert.equal(o.name, 'acme');
    assert.equal(o.balance, 5);
    assert.equal(o.status, 'active');
    await assert.rejects(orgsCreate(db, 'acme', {}), /already exists/);
    await assert.rejects(orgsCreate(db, 'bad', { balance: '-1' }), /whole number/);
    assert.ok((await orgsList(db)).some((x) => x.id === o.id));

    assert.equal((await orgsSetStatus(db, 'acme', 'suspended')).status, 'suspended');
    assert.equal((await orgsSetStatus(db, o.id, 'active')).status, 'active');
    await assert.rejects(orgsSetStatus(db, 'nope', 'active'), /no organisation "nope"/);

    assert.equal((await orgsBalance(db, 'acme', { add: '3' })).balance, 8);
    assert.equal((await orgsBalance(db, 'acme', { add: '-8' })).balance, 0);
    await assert.rejects(orgsBalance(db, 'acme', { add: '-1' }), /negative/);
    assert.equal((await orgsBalance(db, 'acme', { set: '100' })).balance, 100);
    assert.equal((await orgsBalance(db, 'acme', { set: 'unlimited' })).balance, null);
    await assert.rejects(orgsBalance(db, 'acme', { add: '1' }), /unlimited/);
    await assert.rejects(orgsBalance(db, 'acme', { set: '1', add: '1' }), /one of --set/);
  });
});

describe('keys', () => {
  test('create prints the key once and stores only its hash', async () => {
    await orgsCreate(db, 'keys-org', {});
    const k = await keysCreate(deps, { org: 'keys-org', name: 'web', classes: 'person,dog', quota: '50', rateLimit: '20', expires: '2099-01-01T00:00:00Z' });
    assert.match(k.key, /^cvk_[A-Za-z0-9_-]{43}$/);
    assert.ok(k.key.startsWith(k.prefix));
    assert.deepEqual(k.classes, ['person', 'dog']);
    assert.equal(k.monthly_quota, 50);
    assert.equal(k.rate_limit_per_minute, 20);
    assert.equal(k.expires_at, '2099-01-01T00:00:00.000Z');
    const row = await db('api_keys').where({ id: k.id }).first();
    assert.equal(row.key_hash, hashApiKey(k.key));
    assert.ok(!JSON.stringify(row).includes(k.key), 'the plain key is not stored');
    const shown = await keysShow(deps, k.id);
    assert.equal(shown.usage_this_month, 0);
    assert.equal(shown.last_used_at, null);
    assert.equal(shown.organization, 'keys-org');
    assert.ok(!('key' in shown));
  });

  test('defaults: all classes, the default quota; empty --classes means none', async () => {
    const all = await keysCreate(deps, { org: 'keys-org', name: 'all' });
    assert.deepEqual(all.classes, ['*']);
    assert.equal(all.monthly_quota, 10_000);
    const none = await keysCreate(deps, { org: 'keys-org', name: 'none', classes: '' });
    assert.deepEqual(none.classes, []);
  });

  test('class names are checked against the catalog', async () => {
    await assert.rejects(keysCreate(deps, { org: 'keys-org', name: 'x', classes: 'person,unicorn' }), /unknown class "unicorn"/);
    await assert.rejects(parseClasses('*,dog', deps.labels), /stands alone/);
    assert.deepEqual(await parseClasses(' sports ball , dog,dog', deps.labels), ['sports ball', 'dog']);
  });

  test('list by org, update, suspend/resume, revoke is final', async () => {
    const k = await keysCreate(deps, { org: 'keys-org', name: 'lifecycle' });
    assert.ok((await keysList(deps, { org: 'keys-org' })).some((x) => x.id === k.id));
    assert.equal((await keysList(deps, {})).every((x) => !('key' in x)), true);

    const u = await keysUpdate(deps, k.id, { name: 'renamed', description: 'd', classes: 'cat', quota: '7', rateLimit: 'default', expires: 'never' });
    assert.equal(u.name, 'renamed');
    assert.deepEqual(u.classes, ['cat']);
    assert.equal(u.monthly_quota, 7);
    assert.equal(u.rate_limit_per_minute, null);
    await assert.rejects(keysUpdate(deps, k.id, {}), /nothing to update/);
    await assert.rejects(keysUpdate(deps, k.id, { expires: 'tomorrow' }), /ISO-8601/);

    assert.equal((await keysSetStatus(deps, k.id, 'suspend')).status, 'suspended');
    assert.equal((await keysSetStatus(deps, k.id, 'resume')).status, 'active');
    assert.equal((await keysSetStatus(deps, k.id, 'revoke')).status, 'revoked');
    await assert.rejects(keysSetStatus(deps, k.id, 'resume'), /revoked/);
    await assert.rejects(keysSetStatus(deps, k.id, 'suspend'), /revoked/);
    await assert.rejects(keysUpdate(deps, k.id, { name: 'again' }), /revoked/);
    await assert.rejects(keysShow(deps, '00000000-0000-0000-0000-000000000000'), /no key/);
  });
});

describe('the real recog process', () => {
  const cli = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
    });

  test('orgs create and keys create --json print machine-readable results', { timeout: 60_000 }, async () => {
    const org = JSON.parse((await cli(['orgs', 'create', 'cli-org', '--balance', '3', '--json'])).stdout);
    assert.equal(org.name, 'cli-org');
    assert.equal(org.balance, 3);
    const key = JSON.parse((await cli(['keys', 'create', '--org', 'cli-org', '--name', 'k', '--classes', '*', '--json'])).stdout);
    assert.match(key.key, /^cvk_/);
    assert.match(key.id, /^[0-9a-f-]{36}$/);
    const list = JSON.parse((await cli(['keys', 'list', '--org', org.id, '--json'])).stdout);
    assert.deepEqual(list.map((k: { id: string }) => k.id), [key.id]);
    assert.ok(!JSON.stringify(list).includes(key.key));
  });

  test('an error exits non-zero with a clear message', { timeout: 60_000 }, async () => {
    await assert.rejects(cli(['keys', 'revoke', 'not-a-key', '--json']), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /no key "not-a-key"/);
      return true;
    });
  });
});
