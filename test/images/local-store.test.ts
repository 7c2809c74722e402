import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { InvalidImageIdError, LocalImageStore } from '../../src/images/local-store.js';
import { readFixture } from '../helpers/fixtures.js';

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(dir, path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name)));
  }
  return out.sort();
}

describe('LocalImageStore', () => {
  let root: string;
  let store: LocalImageStore;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'image-store-'));
    store = new LocalImageStore(path.join(root, 'images'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('round-trips bytes and mime, sharded by id, with no temp files left', async () => {
    const id = randomUUID();
    const png = readFixture('camera.png');
    await store.put(id, { bytes: png, mime: 'image/png' });
    const got = await store.get(id);
    assert.ok(got);
    assert.deepEqual(got.bytes, png);
    assert.equal(got.mime, 'image/png');
    const rel = `${id.slice(0, 2)}/${id.slice(2, 4)}/${id}.png`;
    assert.deepEqual(await listFiles(store.dir), [rel]);
  });

  test('an unknown id is null', async () => {
    assert.equal(await store.get(randomUUID()), null);
  });

  test('ids are case-insensitive', async () => {
    const id = randomUUID();
    await store.put(id.toUpperCase(), { bytes: readFixture('squirrel_cls.jpg'), mime: 'image/jpeg' });
    assert.equal((await store.get(id))?.mime, 'image/jpeg');
  });

  test('a re-put with another type replaces the image', async () => {
    const id = randomUUID();
    await store.put(id, { bytes: readFixture('camera.png'), mime: 'image/png' });
    await store.put(id, { bytes: readFixture('squirrel_cls.jpg'), mime: 'image/jpeg' });
    const got = await store.get(id);
    assert.equal(got?.mime, 'image/jpeg');
    assert.deepEqual(got?.bytes, readFixture('squirrel_cls.jpg'));
    const shard = path.join(store.dir, id.slice(0, 2), id.slice(2, 4));
    assert.deepEqual((await readdir(shard)).filter((f) => f.startsWith(id)), [`${id}.jpg`]);
  });

  test('delete removes the image and is idempotent', async () => {
    const id = randomUUID();
    await store.put(id, { bytes: readFixture('camera.png'), mime: 'image/png' });
    await store.delete(id);
    assert.equal(await store.get(id), null);
    await store.delete(id);
  });

  test('path traversal and other non-UUID ids are refused on every operation', async () => {
    // A file outside the store that a traversal would reach.
    const outside = path.join(root, 'secret.png');
    await writeFile(outside, 'secret');
    const ids = [
      '../secret',
      '../../secret',
      `${randomUUID()}/../../../secret`,
      '..%2fsecret',
      '/etc/passwd',
      '',
      'not-a-uuid',
      `${randomUUID()}\0`,
      `${randomUUID()}.png`,
      ` ${randomUUID()}`,
    ];
    for (const id of ids) {
      await assert.rejects(store.get(id), InvalidImageIdError, JSON.stringify(id));
      await assert.rejects(store.put(id, { bytes: Buffer.from('x'), mime: 'image/png' }), InvalidImageIdError, JSON.stringify(id));
      await assert.rejects(store.delete(id), InvalidImageIdError, JSON.stringify(id));
    }
    assert.equal((await stat(outside)).size, 6, 'the outside file is untouched');
  });

  test('a type that is not an image is refused', async () => {
    await assert.rejects(store.put(randomUUID(), { bytes: Buffer.from('<html>'), mime: 'text/html' }), /cannot store an image of type "text\/html"/);
  });

  test('concurrent puts of the same id leave one complete image', async () => {
    const id = randomUUID();
    const a = readFixture('camera.png');
    const b = readFixture('basketball1.png');
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.put(id, { bytes: i % 2 ? a : b, mime: 'image/png' })));
    const got = await store.get(id);
    assert.ok(got && (got.bytes.equals(a) || got.bytes.equals(b)));
    const shard = path.join(store.dir, id.slice(0, 2), id.slice(2, 4));
    assert.deepEqual((await readdir(shard)).filter((f) => f.includes(id)), [`${id}.png`], 'no temp file left behind');
  });
});
