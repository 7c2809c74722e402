import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HmacImageUrlSigner, loadOrCreateSecret, SECRET_FILE_NAME } from '../../src/images/signed-url.js';

const SECRET = 'a-test-secret-of-enough-length-0123456789';
const NOW = new Date('2026-11-22T12:00:00Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);

function parts(url: string) {
  const u = new URL(url);
  return { url: u, id: decodeURIComponent(u.pathname.split('/').at(-1)!), expires: u.searchParams.get('expires')!, signature: u.searchParams.get('signature')! };
}

describe('HmacImageUrlSigner', () => {
  const signer = new HmacImageUrlSigner({ secret: SECRET, publicBaseUrl: 'https://cv.example.com/', ttlSeconds: 3600 });
  const id = randomUUID();

  test('signs a URL under the public base URL with expiry and signature', () => {
    const { url, expires, signature } = parts(signer.sign(id, NOW));
    assert.equal(url.origin, 'https://cv.example.com');
    assert.equal(url.pathname, `/v1/cv/images/${id}`);
    assert.equal(expires, String(NOW_S + 3600));
    assert.match(signature, /^[A-Za-z0-9_-]{43}$/);
  });

  test('a fresh signature verifies, up to and including the expiry second', () => {
    const { expires, signature } = parts(signer.sign(id, NOW));
    assert.equal(signer.check(id, expires, signature, NOW), 'valid');
    assert.equal(signer.check(id, expires, signature, new Date((NOW_S + 3600) * 1000)), 'valid');
  });

  test('an expired signature is refused', () => {
    const { expires, signature } = parts(signer.sign(id, NOW));
    assert.equal(signer.check(id, expires, signature, new Date((NOW_S + 3601) * 1000)), 'expired');
  });

  test('tampering with the id, the expiry or the signature is refused', () => {
    const { expires, signature } = parts(signer.sign(id, NOW));
    assert.equal(signer.check(randomUUID(), expires, signature, NOW), 'invalid');
    assert.equal(signer.check(id, String(Number(expires) + 1), signature, NOW), 'invalid');
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    assert.equal(signer.check(id, expires, flipped, NOW), 'invalid');
    assert.equal(signer.check(id, expires, signature.slice(0, -1), NOW), 'invalid');
    assert.equal(signer.check(id, expires, `${signature}=`, NOW), 'invalid');
    assert.equal(signer.check(id, ` ${expires}`, signature, NOW), 'invalid');
    assert.equal(signer.check(id, '', signature, NOW), 'invalid');
    assert.equal(signer.check(id, expires, '', NOW), 'invalid');
  });

  test('a signature made with another secret is refused', () => {
    const other = new HmacImageUrlSigner({ secret: `${SECRET}-other`, publicBaseUrl: 'https://cv.example.com', ttlSeconds: 3600 });
    const { expires, signature } = parts(other.sign(id, NOW));
    assert.equal(signer.check(id, expires, signature, NOW), 'invalid');
  });

  test('a short secret is refused', () => {
    assert.throws(() => new HmacImageUrlSigner({ secret: 'short', publicBaseUrl: 'http://x', ttlSeconds: 1 }), /at least 16/);
  });
});

describe('loadOrCreateSecret', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'image-secret-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test('creates a random secret once, mode 0600, and reuses it', async () => {
    const dataDir = path.join(root, 'data');
    const first = await loadOrCreateSecret(dataDir);
    assert.ok(first.length >= 40);
    const file = path.join(dataDir, SECRET_FILE_NAME);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(await loadOrCreateSecret(dataDir), first);
    assert.equal((await readFile(file, 'utf8')).trim(), first);
    assert.notEqual(await loadOrCreateSecret(path.join(root, 'elsewhere')), first);
  });

  test('concurrent first starts agree on one secret', async () => {
    const dataDir = path.join(root, 'race');
    const secrets = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSecret(dataDir)));
    assert.equal(new Set(secrets).size, 1);
  });

  test('an unusable secret file is reported, not silently replaced', async () => {
    const dataDir = path.join(root, 'broken');
    await loadOrCreateSecret(dataDir);
    await writeFile(path.join(dataDir, SECRET_FILE_NAME), 'short\n');
    await assert.rejects(loadOrCreateSecret(dataDir), /no usable secret/);
  });
});
