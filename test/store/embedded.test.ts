import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../../src/store/embedded.js';
import { migrateLatest, migrationStatus } from '../../src/store/migrate.js';
import { createOrg, listOrgs } from '../../src/store/orgs.js';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-embedded-'));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the `postgres` user and must reach it
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

test('embedded PostgreSQL: starts under DATA_DIR, migrates, is shared with a second process, stops', { timeout: 180_000 }, async () => {
  let owner: DatabaseHandle | undefined;
  let shared: DatabaseHandle | undefined;
  try {
    owner = await openDatabase({ dataDir });
    assert.equal(owner.mode, 'embedded-owner');
    assert.ok((await stat(path.join(dataDir, 'postgres', 'data', 'PG_VERSION'))).isFile());
    const applied = await migrateLatest(owner.db);
    assert.ok(applied.includes('0001_initial'));
    assert.deepEqual((await migrationStatus(owner.db)).pending, []);
    await createOrg(owner.db, { name: 'acme' });

    // A second opener (the CLI while the service runs) joins the running server.
    shared = await openDatabase({ dataDir });
    assert.equal(shared.mode, 'embedded-shared');
    assert.deepEqual((await listOrgs(shared.db)).map((o) => o.name), ['acme']);
    await shared.close();
    shared = undefined;
  } finally {
    await shared?.close();
    await owner?.close();
  }
  await assert.rejects(stat(path.join(dataDir, 'postgres', 'server.json')), /ENOENT/);

  // Data survives a restart.
  const again = await openDatabase({ dataDir });
  try {
    assert.equal(again.mode, 'embedded-owner');
    assert.deepEqual(await migrateLatest(again.db), []);
    assert.deepEqual((await listOrgs(again.db)).map((o) => o.name), ['acme']);
  } finally {
    await again.close();
  }
});

test('the service waits for a cluster a CLI command started to stop, then runs its own', { timeout: 180_000 }, async () => {
  const cli = await openDatabase({ dataDir, role: 'cli' });
  assert.equal(cli.mode, 'embedded-owner');
  let serviceOpened = false;
  const service = openDatabase({ dataDir, role: 'service' }).then((h) => {
    serviceOpened = true;
    return h;
  });
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(serviceOpened, false, 'the service does not join a CLI-owned cluster');
  await cli.close();
  const handle = await service;
  try {
    assert.equal(handle.mode, 'embedded-owner');
    assert.deepEqual((await listOrgs(handle.db)).map((o) => o.name), ['acme']);
    // and a CLI command joins the service's cluster
    const joined = await openDatabase({ dataDir, role: 'cli' });
    assert.equal(joined.mode, 'embedded-shared');
    await joined.close();
  } finally {
    await handle.close();
  }
});
