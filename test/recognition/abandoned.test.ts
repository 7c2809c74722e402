/** Requests left QUEUED/PROCESSING by a crash end ERROR at the next start; live ones are left alone. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildApp, instanceIdFor } from '../../src/app.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp({}, { sweepAbandoned: false });
});
after(async () => {
  await t?.close();
});

test('at start, requests older than the deadline margin are marked ERROR; recent ones (another replica) are not', async () => {
  const k = await t.newKey();
  const base = { key_id: k.id, org_id: k.orgId, source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:x' };
  const [old1, old2, fresh, done] = await t.db('requests')
    .insert([
      { ...base, kind: 'sync', external_id: 'crashed', status: 'PROCESSING', created_at: t.db.raw(`now() - interval '2 hours'`), started_at: t.db.raw(`now() - interval '2 hours'`) },
      { ...base, kind: 'batch', external_id: null, status: 'QUEUED', created_at: t.db.raw(`now() - interval '10 minutes'`) },
      { ...base, kind: 'sync', external_id: 'live', status: 'PROCESSING' },
      { ...base, kind: 'sync', external_id: 'done', status: 'DONE', created_at: t.db.raw(`now() - interval '2 hours'`) },
    ])
    .returning('id');

  const app = await buildApp({ ...t.services }, { logger: false });
  await app.ready();
  await app.close();

  const status = async (id: string) => (await t.db('requests').where({ id }).first()).status;
  assert.equal(await status(old1.id), 'ERROR');
  assert.equal(await status(old2.id), 'ERROR');
  assert.equal(await status(fresh.id), 'PROCESSING');
  assert.equal(await status(done.id), 'DONE');
  const row = await t.db('requests').where({ id: old1.id }).first();
  assert.match(row.error, /not finished within the time limit/);
  assert.ok(row.finished_at instanceof Date);

  // The idempotency slot of the crashed request is free again.
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': k.key },
    payload: { external_id: 'crashed', image_url: 'http://127.0.0.1:9/a.png' },
  });
  assert.equal(res.statusCode, 200, res.body);
  await t.db('requests').where({ id: fresh.id }).update({ status: 'ERROR' });
});

test('a restart under the same instance id ends that instance\'s unfinished requests at once, however recent', async () => {
  const k = await t.newKey();
  const base = { key_id: k.id, org_id: k.orgId, kind: 'sync', source: 'url', source_url: 'https://example.com/a.png', image_fingerprint: 'url:x' };
  const [mine, theirs] = await t.db('requests')
    .insert([
      { ...base, external_id: 'mine', status: 'PROCESSING', instance_id: 'host-a:8080' },
      { ...base, external_id: 'theirs', status: 'QUEUED', instance_id: 'host-b:8080' },
    ])
    .returning('id');
  const app = await buildApp({ ...t.services, instanceId: 'host-a:8080' }, { logger: false });
  await app.ready();
  try {
    const row = await t.db('requests').where({ id: mine.id }).first();
    assert.equal(row.status, 'ERROR');
    assert.match(row.error, /interrupted: the service restarted/);
    assert.equal((await t.db('requests').where({ id: theirs.id }).first()).status, 'QUEUED', 'another live replica\'s work is untouched');
  } finally {
    await app.close();
    await t.db('requests').where({ id: theirs.id }).update({ status: 'ERROR' });
  }
});

test('instanceIdFor is stable for a host and port', () => {
  assert.equal(instanceIdFor({ port: 8080 }, 'pod-1'), 'pod-1:8080');
});
