import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { ImageError } from '../../src/images/errors.js';
import { createImageIntake } from '../../src/images/intake.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer } from '../helpers/image-server.js';

test('createImageIntake wires the configuration: allow-list, data dir, public URL, secret', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'image-intake-'));
  const server = await startImageServer();
  try {
    const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://cv.example.com', IMAGE_FETCH_ALLOW_CIDRS: '127.0.0.1/32' });
    const { fetcher, store, signer } = await createImageIntake(config);
    const image = await fetcher.fetch(server.url('/images/camera.png'));
    const id = randomUUID();
    await store.put(id, image);
    assert.deepEqual((await store.get(id))?.bytes, readFixture('camera.png'));
    assert.ok((await readdir(path.join(dataDir, 'images'))).length > 0, 'images are kept under DATA_DIR/images');
    assert.ok((await readdir(dataDir)).includes('image-url-secret'));
    const url = new URL(signer.sign(id));
    assert.equal(url.origin, 'https://cv.example.com');
    assert.equal(signer.check(id, url.searchParams.get('expires')!, url.searchParams.get('signature')!), 'valid');

    // Without the allow-list entry, the same server is refused.
    const closed = await createImageIntake(loadConfig({ DATA_DIR: dataDir }));
    await assert.rejects(closed.fetcher.fetch(server.url('/images/camera.png')), (e) => e instanceof ImageError && e.code === 'INVALID_IMAGE_URL');
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('IMAGE_URL_SECRET, when set, is used instead of a generated file', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'image-intake-'));
  try {
    const secret = 'configured-secret-0123456789abcdef';
    const a = await createImageIntake(loadConfig({ DATA_DIR: dataDir, IMAGE_URL_SECRET: secret }));
    const b = await createImageIntake(loadConfig({ DATA_DIR: path.join(dataDir, 'other'), IMAGE_URL_SECRET: secret }));
    const id = randomUUID();
    const url = new URL(a.signer.sign(id));
    assert.equal(b.signer.check(id, url.searchParams.get('expires')!, url.searchParams.get('signature')!), 'valid');
    assert.deepEqual(await readdir(dataDir).catch(() => []), []);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
