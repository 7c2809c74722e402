/**
 * https through a pinned connection: the certificate is checked against the URL's host name (SNI and
 * Host carry the name, not the pinned address). Uses a throwaway self-signed certificate from openssl.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ImageError } from '../../src/images/errors.js';
import { createImageFetcher, type LookupFn } from '../../src/images/fetch.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

describe('image fetcher over https with a pinned address', () => {
  let dir: string;
  let cert: Buffer;
  let server: ImageServer;
  const lookup: LookupFn = async (host) => {
    if (host === 'images.test' || host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
    throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'image-tls-'));
    const key = path.join(dir, 'key.pem');
    const crt = path.join(dir, 'cert.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '1',
      '-subj', '/CN=images.test', '-addext', 'subjectAltName=DNS:images.test',
    ], { stdio: 'ignore' });
    cert = await readFile(crt);
    server = await startImageServer({ tls: { key: await readFile(key), cert } });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('SNI and Host name the host while the connection goes to the checked address', async () => {
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: 1 << 20, maxRedirects: 0, lookup, ca: cert });
    const image = await fetcher.fetch(`https://images.test:${server.port}/images/camera.png`);
    assert.deepEqual(image.bytes, readFixture('camera.png'));
    const req = server.requests.at(-1)!;
    assert.equal(req.servername, 'images.test');
    assert.equal(req.headers.host, `images.test:${server.port}`);
  });

  test('a certificate for another name is a download failure', async () => {
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: 1 << 20, maxRedirects: 0, lookup, ca: cert });
    await assert.rejects(fetcher.fetch(`https://other.test:${server.port}/images/camera.png`), (err) => {
      assert.ok(err instanceof ImageError);
      assert.equal(err.code, 'IMAGE_DOWNLOAD_FAILED');
      assert.match(err.message, /TLS/);
      return true;
    });
  });

  test('a redirect from https to plain http is refused, and the http server never sees a request', async () => {
    const plain = await startImageServer();
    try {
      const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: 1 << 20, maxRedirects: 3, lookup, ca: cert });
      for (const code of [301, 302, 303, 307, 308]) {
        const to = encodeURIComponent(`http://images.test:${plain.port}/images/camera.png`);
        // also after a first https → https hop
        await assert.rejects(fetcher.fetch(`https://images.test:${server.port}/redirect?n=2&code=${code}&to=${to}`), (err) => {
          assert.ok(err instanceof ImageError);
          assert.equal(err.code, 'INVALID_IMAGE_URL');
          assert.match(err.message, /from https to plain http/);
          return true;
        });
      }
      assert.equal(plain.connections, 0, 'nothing was sent in clear text');
      // the other way, an upgrade from http to https, is followed
      const up = encodeURIComponent(`https://images.test:${server.port}/images/camera.png`);
      const image = await fetcher.fetch(`http://images.test:${plain.port}/redirect?n=1&to=${up}`);
      assert.deepEqual(image.bytes, readFixture('camera.png'));
      assert.equal(image.finalUrl, `https://images.test:${server.port}/images/camera.png`);
    } finally {
      await plain.close();
    }
  });

  test('an untrusted certificate is a download failure', async () => {
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: 1 << 20, maxRedirects: 0, lookup });
    await assert.rejects(fetcher.fetch(`https://images.test:${server.port}/images/camera.png`), (err) => {
      assert.ok(err instanceof ImageError);
      assert.equal(err.code, 'IMAGE_DOWNLOAD_FAILED');
      return true;
    });
  });
});
