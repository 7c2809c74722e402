/**
 * The S3 image store against a real S3 server (MinIO, scripts/minio.sh): put/get/stream/delete,
 * two app replicas sharing one bucket and database (a link from A served by B), retention
 * (one replica deletes, the link answers 410, the lookup still answers), a store outage, and
 * presigned links (IMAGE_URL_MODE=presigned) fetched from the server directly.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { S3ImageStore, parseS3Location } from '../../src/images/s3-store.js';
import { sweepExpiredImages } from '../../src/store/image-retention.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { findMinio, startMinio, MINIO_PASSWORD, MINIO_USER, type MinioServer } from '../helpers/minio.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

// The app's S3 client takes credentials from the AWS chain, as in production: here, the environment.
process.env.AWS_ACCESS_KEY_ID = MINIO_USER;
process.env.AWS_SECRET_ACCESS_KEY = MINIO_PASSWORD;

const found = findMinio();
const skip = 'skip' in found ? found.skip : false;

let minio: MinioServer;
before(async () => {
  if ('bin' in found) minio = await startMinio(found.bin);
});
after(async () => {
  await minio?.close();
});

/** The link's path and query, for inject() (PUBLIC_BASE_URL is http://cv.test in tests). */
const linkPath = (imageUrl: string) => {
  const u = new URL(imageUrl);
  return `${u.pathname}${u.search}`;
};

describe('S3ImageStore', { skip }, () => {
  let store: S3ImageStore;
  before(async () => {
    await minio.createBucket('unit');
    store = new S3ImageStore({
      bucket: 'unit',
      prefix: 'imgs/',
      endpoint: minio.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD },
    });
  });
  after(() => store?.close());

  test('IMAGE_STORE locations: bucket, prefix with one trailing slash; anything else refused', () => {
    assert.deepEqual(parseS3Location('s3://my-bucket/a/b/'), { bucket: 'my-bucket', prefix: 'a/b/' });
    assert.deepEqual(parseS3Location('s3://my-bucket'), { bucket: 'my-bucket', prefix: '' });
    assert.throws(() => parseS3Location('s3://UPPER/x'), /s3:\/\/bucket\/prefix/);
    assert.throws(() => parseS3Location('https://bucket/x'), /s3:\/\/bucket\/prefix/);
  });

  test('put, get, open as a stream, delete; the object carries the content type', async () => {
    const id = randomUUID();
    const png = readFixture('camera.png');
    await store.put(id, { bytes: png, mime: 'image/png' });

    const c = minio.client();
    const head = await c.send(new HeadObjectCommand({ Bucket: 'unit', Key: `imgs/${id.slice(0, 2)}/${id}` }));
    c.destroy();
    assert.equal(head.ContentType, 'image/png');
    assert.equal(head.ContentLength, png.length);

    const got = await store.get(id.toUpperCase());
    assert.equal(got?.mime, 'image/png');
    assert.ok(got?.bytes.equals(png));

    const opened = await store.open(id);
    assert.ok(opened);
    assert.equal(opened.size, png.length);
    assert.ok(opened.etag);
    const chunks: Buffer[] = [];
    for await (const chunk of opened.body) chunks.push(chunk as Buffer);
    assert.ok(Buffer.concat(chunks).equals(png));

    await store.delete(id);
    assert.equal(await store.get(id), null);
    assert.equal(await store.open(id), null);
    await store.delete(id); // deleting an absent image succeeds
  });

  test('a re-put replaces the image (atomic), with its new type', async () => {
    const id = randomUUID();
    await store.put(id, { bytes: readFixture('camera.png'), mime: 'image/png' });
    await store.put(id, { bytes: readFixture('squirrel_cls.jpg'), mime: 'image/jpeg' });
    const got = await store.get(id);
    assert.equal(got?.mime, 'image/jpeg');
    assert.ok(got?.bytes.equals(readFixture('squirrel_cls.jpg')));
  });

  test('ids that are not UUIDs and types that are not images are refused before any call', async () => {
    await assert.rejects(store.put('../etc/passwd', { bytes: Buffer.from('x'), mime: 'image/png' }), { name: 'InvalidImageIdError' });
    await assert.rejects(store.put(randomUUID(), { bytes: Buffer.from('x'), mime: 'text/html' }), /cannot store/);
  });

  test('ready() names a missing bucket', async () => {
    assert.deepEqual(await store.ready(), { ok: true });
    const missing = new S3ImageStore({
      bucket: 'no-such-bucket',
      prefix: '',
      endpoint: minio.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD },
    });
    try {
      assert.deepEqual(await missing.ready(), { ok: false, detail: 's3://no-such-bucket: no such bucket' });
    } finally {
      missing.close();
    }
  });
});

describe('two API replicas sharing one bucket and one database', { skip }, () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let key: TestKey;
  before(async () => {
    await minio.createBucket('replicas');
    database = await createTestDatabase();
    a = await buildTestApp(minio.env('replicas'), { shareDatabase: database });
    b = await buildTestApp(minio.env('replicas'), { shareDatabase: database });
    key = await a.newKey();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const sync = (app: TestApp, externalId: string, image = readFixture('camera.png')) =>
    app.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': key.key }, payload: { external_id: externalId, image_base64: image.toString('base64') } });

  test('a link handed out by A is served by B: streamed bytes, stored type, caching headers', async () => {
    const res = await sync(a, 'from-a');
    assert.equal(res.statusCode, 200, res.body);
    const body = json<{ request_id: string; status: string; image_url: string }>(res);
    assert.equal(body.status, 'DONE', res.body);
    // The object is in the bucket, not on A's disk.
    const c = minio.client();
    const obj = await c.send(new GetObjectCommand({ Bucket: 'replicas', Key: `images/${body.request_id.slice(0, 2)}/${body.request_id}` }));
    const stored = Buffer.from(await obj.Body!.transformToByteArray());
    c.destroy();
    assert.equal(obj.ContentType, 'image/png');
    assert.ok(stored.equals(readFixture('camera.png')));

    // Over a real socket, as a browser would fetch it.
    const base = await b.app.listen({ port: 0, host: '127.0.0.1' });
    const image = await fetch(`${base}${linkPath(body.image_url)}`);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.equal(image.headers.get('x-content-type-options'), 'nosniff');
    assert.match(String(image.headers.get('cache-control')), /^private, max-age=\d+, immutable$/);
    assert.ok(image.headers.get('etag'));
    assert.equal(image.headers.get('content-length'), String(readFixture('camera.png').length));
    assert.ok(Buffer.from(await image.arrayBuffer()).equals(readFixture('camera.png')));
  });

  test('retention: one replica deletes, the other skips; the link answers 410 JSON; the lookup still answers', async () => {
    const res = await sync(a, 'to-expire', readFixture('squirrel_cls.jpg'));
    const { request_id: id, image_url: imageUrl, results: before } = json<{ request_id: string; image_url: string; results: unknown[] }>(res);
    const kept = json<{ request_id: string; image_url: string }>(await sync(a, 'to-keep'));
    await a.db('requests').where({ id }).update({ created_at: new Date(Date.now() - 31 * 86_400_000) });

    const [ra, rb] = await Promise.all([
      sweepExpiredImages(a.db, a.services.imageStore, 30),
      sweepExpiredImages(b.db, b.services.imageStore, 30),
    ]);
    assert.equal(ra.deleted + rb.deleted, 1, JSON.stringify({ ra, rb }));
    assert.equal(ra.failed + rb.failed, 0);
    assert.equal(await a.services.imageStore.get(id), null);
    assert.ok(await a.services.imageStore.get(kept.request_id), 'a recent image stays');

    for (const replica of [a, b]) {
      const gone = await replica.app.inject({ method: 'GET', url: linkPath(imageUrl) });
      assert.equal(gone.statusCode, 410, gone.body);
      assert.equal(json<{ error_code: string }>(gone).error_code, 'IMAGE_EXPIRED');
    }
    const lookup = await b.app.inject({ method: 'GET', url: `/v1/cv/requests/${id}`, headers: { 'x-api-key': key.key } });
    assert.equal(lookup.statusCode, 200);
    const result = json<{ status: string; results: unknown[] }>(lookup);
    assert.equal(result.status, 'DONE');
    assert.deepEqual(result.results, before, 'the stored result is unchanged');

    // A second sweep finds nothing more to do.
    assert.deepEqual(await sweepExpiredImages(b.db, b.services.imageStore, 30), { ran: true, deleted: 0, failed: 0 });
  });

  test('store outage: recognition ends ERROR 503 naming the store, /readyz names it, links 503; all recover', async () => {
    const before = json<{ image_url: string }>(await sync(a, 'before-outage'));
    await minio.stop();
    try {
      const res = await sync(a, 'during-outage');
      assert.equal(res.statusCode, 200, res.body);
      const body = json<{ request_id: string; status: string; error: string; response_code: number }>(res);
      assert.equal(body.status, 'ERROR');
      assert.match(body.error, /^image storage unavailable/);
      assert.equal(body.response_code, 503);
      const row = await a.db('requests').where({ id: body.request_id }).first();
      assert.equal(row.image_stored, false, 'no DONE row pointing at a missing image');

      const ready = await b.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.match(json<{ checks: Record<string, string> }>(ready).checks.imageStore, /^s3:\/\/replicas: /);

      const link = await b.app.inject({ method: 'GET', url: linkPath(before.image_url) });
      assert.equal(link.statusCode, 503);
      assert.equal(json<{ error_code: string }>(link).error_code, 'IMAGE_STORE_UNAVAILABLE');
    } finally {
      await minio.start();
    }
    assert.equal((await b.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    // After an ERROR the same external_id runs again as a new request.
    const again = json<{ status: string }>(await sync(a, 'during-outage'));
    assert.equal(again.status, 'DONE');
  });
});

describe('presigned links (IMAGE_URL_MODE=presigned)', { skip }, () => {
  let app: TestApp;
  let key: TestKey;
  // localhost reaches the same server by another name: the links must carry that host.
  const publicEndpoint = () => minio.endpoint.replace('127.0.0.1', 'localhost');
  before(async () => {
    await minio.createBucket('presigned');
    app = await buildTestApp({ ...minio.env('presigned'), IMAGE_URL_MODE: 'presigned', S3_PUBLIC_ENDPOINT: publicEndpoint(), IMAGE_URL_TTL_SECONDS: '3600' });
    key = await app.newKey();
  });
  after(async () => {
    await app?.close();
  });

  const sync = (externalId: string, image: Buffer) =>
    app.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': key.key }, payload: { external_id: externalId, image_base64: image.toString('base64') } });

  test('sync and lookup hand out a presigned link on the public host; it downloads the stored bytes and type, without a key', async () => {
    const png = readFixture('camera.png');
    const res = await sync('presigned-1', png);
    assert.equal(res.statusCode, 200, res.body);
    const body = json<{ request_id: string; status: string; image_url: string }>(res);
    assert.equal(body.status, 'DONE', res.body);
    const link = new URL(body.image_url);
    assert.equal(link.origin, publicEndpoint());
    assert.equal(link.pathname, `/presigned/images/${body.request_id.slice(0, 2)}/${body.request_id}`);
    assert.equal(link.searchParams.get('X-Amz-Expires'), '3600');
    assert.ok(link.searchParams.get('X-Amz-Signature'));

    const image = await fetch(body.image_url);
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.ok(Buffer.from(await image.arrayBuffer()).equals(png));

    const lookup = await app.app.inject({ method: 'GET', url: `/v1/cv/requests/${body.request_id}`, headers: { 'x-api-key': key.key } });
    const looked = new URL(json<{ image_url: string }>(lookup).image_url);
    assert.equal(looked.pathname, link.pathname);
    assert.ok(looked.searchParams.get('X-Amz-Signature'));

    // A replay (same external_id) answers the first request, with a fresh link to the same object.
    const replay = json<{ request_id: string; image_url: string }>(await sync('presigned-1', png));
    assert.equal(replay.request_id, body.request_id);
    assert.equal(new URL(replay.image_url).pathname, link.pathname);
    assert.equal((await fetch(replay.image_url)).status, 200);

    // The signature covers the key: the same query on another request's key is refused.
    const forged = new URL(body.image_url);
    forged.pathname = forged.pathname.replace(body.request_id, randomUUID());
    assert.equal((await fetch(forged)).status, 403);
  });

  test('an expired presigned link is refused by the store', async () => {
    // 3 s, not 1: the signature's date is whole seconds (rounded down), so a 1 s link can be
    // expired by the time it is first fetched. Waiting 3.2 s after the answer is past any expiry.
    const short = await buildTestApp({ ...minio.env('presigned'), IMAGE_URL_MODE: 'presigned', IMAGE_URL_TTL_SECONDS: '3' }, { shareDatabase: app.database });
    try {
      const other = await short.newKey();
      const res = await short.app.inject({
        method: 'POST',
        url: '/v1/cv/requests/sync',
        headers: { 'x-api-key': other.key },
        payload: { external_id: 'short-lived', image_base64: readFixture('squirrel_cls.jpg').toString('base64') },
      });
      const { image_url: url } = json<{ image_url: string }>(res);
      assert.equal(new URL(url).origin, minio.endpoint, 'without S3_PUBLIC_ENDPOINT the link uses S3_ENDPOINT');
      assert.equal((await fetch(url)).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 3_200));
      assert.equal((await fetch(url)).status, 403);
    } finally {
      await short.close();
    }
  });
});
