/**
 * Image retention on the local store with the real PostgreSQL: old images are deleted and
 * recorded (link 410, lookup still answers), recent ones stay, 0 keeps everything, and a
 * replica that finds the advisory lock taken skips the run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { RETENTION_LOCK_KEY, sweepExpiredImages } from '../../src/store/image-retention.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';

let t: TestApp;
let key: TestKey;
before(async () => {
  t = await buildTestApp();
  key = await t.newKey();
});
after(async () => {
  await t?.close();
});

async function recognise(externalId: string, ageDays: number): Promise<{ id: string; link: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: externalId, image_base64: readFixture('camera.png').toString('base64') },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = json<{ request_id: string; image_url: string }>(res);
  await t.db('requests').where({ id: body.request_id }).update({ created_at: new Date(Date.now() - ageDays * 86_400_000) });
  const u = new URL(body.image_url);
  return { id: body.request_id, link: `${u.pathname}${u.search}` };
}

test('the retention sweep deletes old images, records it, and keeps recent ones', async () => {
  const old = await recognise('old', 40);
  const recent = await recognise('recent', 2);

  assert.deepEqual(await sweepExpiredImages(t.db, t.services.imageStore, 0), { ran: false, deleted: 0, failed: 0 }, '0 keeps forever');
  assert.ok(await t.services.imageStore.get(old.id));

  const r = await sweepExpiredImages(t.db, t.services.imageStore, 30);
  assert.deepEqual(r, { ran: true, deleted: 1, failed: 0 });
  assert.equal(await t.services.imageStore.get(old.id), null);
  assert.ok(await t.services.imageStore.get(recent.id));
  const row = await t.db('requests').where({ id: old.id }).first();
  assert.ok(row.image_deleted_at instanceof Date);

  const gone = await t.app.inject({ method: 'GET', url: old.link });
  assert.equal(gone.statusCode, 410);
  assert.deepEqual(Object.keys(json(gone)).sort(), ['error', 'error_code', 'message']);
  assert.equal(json<{ error_code: string }>(gone).error_code, 'IMAGE_EXPIRED');
  assert.equal((await t.app.inject({ method: 'GET', url: recent.link })).statusCode, 200);

  const lookup = await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${old.id}`, headers: { 'x-api-key': key.key } });
  assert.equal(lookup.statusCode, 200);
  assert.equal(json<{ status: string }>(lookup).status, 'DONE');
});

test('a replica that finds the sweep lock taken skips the run and deletes nothing', async () => {
  const old = await recognise('old-locked', 60);
  const holder = new pg.Client({ connectionString: t.database.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [RETENTION_LOCK_KEY]);
    assert.deepEqual(await sweepExpiredImages(t.db, t.services.imageStore, 30), { ran: false, deleted: 0, failed: 0 });
    assert.ok(await t.services.imageStore.get(old.id), 'nothing deleted while another replica sweeps');
    await holder.query('COMMIT');
  } finally {
    await holder.end();
  }
  assert.deepEqual(await sweepExpiredImages(t.db, t.services.imageStore, 30), { ran: true, deleted: 1, failed: 0 });
});

test('a link to an image that was never stored is still 404, not 410', async () => {
  const id = '3f1c2a4e-9b7d-4c1e-8f00-000000000000';
  const link = new URL(t.services.signer.sign(id));
  const res = await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
  assert.equal(res.statusCode, 404);
  assert.equal(json<{ error_code: string }>(res).error_code, 'IMAGE_NOT_FOUND');
});
