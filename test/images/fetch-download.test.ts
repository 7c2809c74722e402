/**
 * Downloads through the allow-list from real servers on loopback: success, upstream errors, time and
 * size limits, non-images, redirect chains, and the connection pinned to the checked address.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ImageError } from '../../src/images/errors.js';
import { createImageFetcher, type LookupFn, type ResolvedAddress } from '../../src/images/fetch.js';
import { readFixture } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

const MiB = 1024 * 1024;

function downloadFailed(status?: number, message?: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof ImageError, `expected an ImageError, got ${String(err)}`);
    assert.equal(err.code, 'IMAGE_DOWNLOAD_FAILED', err.message);
    assert.equal(err.upstreamStatus, status);
    if (message) assert.match(err.message, message);
    return true;
  };
}

function invalidUrl(err: unknown): boolean {
  assert.ok(err instanceof ImageError, `expected an ImageError, got ${String(err)}`);
  assert.equal(err.code, 'INVALID_IMAGE_URL', err.message);
  return true;
}

describe('image fetcher downloads through the allow-list', () => {
  let server: ImageServer;
  const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 3 });

  before(async () => {
    server = await startImageServer();
  });
  after(async () => {
    await server.close();
  });

  test('200 PNG: the exact bytes, format, mime, status and final URL', async () => {
    const url = server.url('/images/camera.png');
    const image = await fetcher.fetch(url);
    assert.deepEqual(image.bytes, readFixture('camera.png'));
    assert.equal(image.format, 'png');
    assert.equal(image.mime, 'image/png');
    assert.equal(image.status, 200);
    assert.equal(image.finalUrl, url);
    const req = server.requests.at(-1)!;
    assert.equal(req.headers.host, `127.0.0.1:${server.port}`);
    assert.equal(req.headers['accept-encoding'], 'identity');
  });

  test('200 JPEG', async () => {
    const image = await fetcher.fetch(server.url('/images/squirrel_cls.jpg'));
    assert.equal(image.format, 'jpeg');
    assert.deepEqual(image.bytes, readFixture('squirrel_cls.jpg'));
  });

  for (const status of [404, 403, 500, 503]) {
    test(`upstream ${status} is a download failure carrying the status`, async () => {
      await assert.rejects(fetcher.fetch(server.url(`/status/${status}`)), downloadFailed(status, new RegExp(`HTTP ${status}`)));
    });
  }

  test('a server that never answers times out', async () => {
    const quick = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 300, maxBytes: MiB, maxRedirects: 3 });
    await assert.rejects(quick.fetch(server.url('/slow?ms=60000')), downloadFailed(undefined, /longer than 300 ms/));
  });

  test('a body that trickles forever times out', async () => {
    const quick = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 300, maxBytes: MiB, maxRedirects: 3 });
    await assert.rejects(quick.fetch(server.url('/trickle?ms=20')), downloadFailed(undefined, /longer than 300 ms/));
  });

  test('the caller’s signal cancels the download', async () => {
    const controller = new AbortController();
    const pending = fetcher.fetch(server.url('/slow?ms=60000'), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await assert.rejects(pending, downloadFailed(undefined, /cancelled/));
  });

  test('an oversized streamed body is abandoned early', async () => {
    const total = 256 * MiB;
    await assert.rejects(fetcher.fetch(server.url(`/huge?bytes=${total}`)), downloadFailed(200, /larger than 1048576 bytes/));
    const huge = server.huge!;
    await huge.done;
    assert.equal(huge.closedEarly, true);
    // Socket buffers let the server push somewhat past the limit, but nowhere near the whole body.
    assert.ok(huge.bytesWritten < 64 * MiB, `server wrote ${huge.bytesWritten} bytes of ${total}`);
  });

  test('a declared Content-Length over the limit is refused before reading', async () => {
    await assert.rejects(fetcher.fetch(server.url(`/huge?bytes=${256 * MiB}&declare=1`)), downloadFailed(200, /larger than/));
    const huge = server.huge!;
    await huge.done;
    assert.equal(huge.closedEarly, true);
    assert.ok(huge.bytesWritten < 64 * MiB, `server wrote ${huge.bytesWritten} bytes`);
  });

  test('a body of exactly maxBytes is accepted', async () => {
    const exact = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: 100_000, maxRedirects: 0 });
    const image = await exact.fetch(server.url('/huge?bytes=100000'));
    assert.equal(image.bytes.length, 100_000);
    await assert.rejects(exact.fetch(server.url('/huge?bytes=100001')), downloadFailed(200, /larger than 100000/));
  });

  test('an HTML page is not an image', async () => {
    await assert.rejects(fetcher.fetch(server.url('/text')), downloadFailed(200, /not return a JPEG, PNG, WebP or GIF/));
  });

  test('an empty body is not an image', async () => {
    await assert.rejects(fetcher.fetch(server.url('/empty')), downloadFailed(200, /not return/));
  });

  test('a redirect chain within the limit is followed', async () => {
    const image = await fetcher.fetch(server.url('/redirect?n=3'));
    assert.equal(image.format, 'png');
    assert.equal(image.finalUrl, server.url('/images/camera.png'));
  });

  for (const code of [301, 303, 307, 308]) {
    test(`redirect status ${code} is followed`, async () => {
      const image = await fetcher.fetch(server.url(`/redirect?n=1&code=${code}&to=/images/squirrel_cls.jpg`));
      assert.equal(image.format, 'jpeg');
    });
  }

  test('one redirect too many fails with the redirect status', async () => {
    server.reset();
    await assert.rejects(fetcher.fetch(server.url('/redirect?n=4')), downloadFailed(302, /more than 3 times/));
    assert.equal(server.requests.length, 4, 'the fourth redirect is not followed');
  });

  test('maxRedirects 0 follows none', async () => {
    const none = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 0 });
    await assert.rejects(none.fetch(server.url('/redirect?n=1')), downloadFailed(302, /more than 0 times/));
  });

  test('a redirect without Location fails', async () => {
    await assert.rejects(fetcher.fetch(server.url('/no-location')), downloadFailed(302, /without a Location/));
  });

  test('a redirect to another scheme is an invalid URL', async () => {
    await assert.rejects(fetcher.fetch(server.url(`/redirect?n=1&to=${encodeURIComponent('file:///etc/passwd')}`)), invalidUrl);
  });

  test('a redirect to the cloud metadata address is refused without following', async () => {
    const to = encodeURIComponent('http://169.254.169.254/latest/meta-data/');
    await assert.rejects(fetcher.fetch(server.url(`/redirect?n=2&to=${to}`)), invalidUrl);
  });

  test('a refused connection is a download failure', async () => {
    const closed = await startImageServer();
    const port = closed.port;
    await closed.close();
    await assert.rejects(fetcher.fetch(`http://127.0.0.1:${port}/images/camera.png`), downloadFailed(undefined, /refused/));
  });

  // Refused like a name resolving to an internal address, in the same words (fetch-ssrf.test.ts).
  test('a name that does not resolve is an invalid URL', async () => {
    const nxdomain: LookupFn = async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    const f = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 0, lookup: nxdomain });
    await assert.rejects(f.fetch('http://no-such-host.test/a.png'), invalidUrl);
  });

  test('a name with no addresses is an invalid URL', async () => {
    const f = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 0, lookup: async () => [] });
    await assert.rejects(f.fetch('http://empty.test/a.png'), invalidUrl);
  });
});

describe('image fetcher pins the connection to the address it checked', () => {
  // Two servers on the same port: the allowed one on 127.0.0.2, the forbidden one on 127.0.0.1.
  let allowed: ImageServer;
  let forbidden: ImageServer;

  before(async () => {
    for (let attempt = 0; ; attempt++) {
      allowed = await startImageServer({ host: '127.0.0.2' });
      try {
        forbidden = await startImageServer({ host: '127.0.0.1', port: allowed.port });
        break;
      } catch (err) {
        await allowed.close();
        if (attempt >= 5) throw err;
      }
    }
  });
  after(async () => {
    await allowed.close();
    await forbidden.close();
  });
  beforeEach(() => {
    allowed.reset();
    forbidden.reset();
  });

  /** DNS rebinding: the first answer is the allowed address, every later one the forbidden one. */
  function rebindingLookup(): LookupFn & { calls: number } {
    const fn = async (): Promise<ResolvedAddress[]> => {
      fn.calls++;
      return [{ address: fn.calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    };
    fn.calls = 0;
    return fn;
  }

  test('a rebinding name is resolved once and never reaches the second address', async () => {
    const lookup = rebindingLookup();
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.2/32'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 3, lookup });
    const image = await fetcher.fetch(`http://rebind.test:${allowed.port}/images/camera.png`);
    assert.deepEqual(image.bytes, readFixture('camera.png'));
    assert.equal(lookup.calls, 1);
    assert.equal(forbidden.connections, 0);
    // The pinned connection still speaks to the named host.
    assert.equal(allowed.requests.at(-1)!.headers.host, `rebind.test:${allowed.port}`);
  });

  test('a redirect back to the same name is resolved and checked again', async () => {
    const lookup = rebindingLookup();
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.2/32'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 3, lookup });
    const to = encodeURIComponent(`http://rebind.test:${allowed.port}/images/camera.png`);
    await assert.rejects(fetcher.fetch(`http://rebind.test:${allowed.port}/redirect?n=1&to=${to}`), invalidUrl);
    assert.equal(lookup.calls, 2);
    assert.equal(forbidden.connections, 0);
  });

  test('a redirect to a literal address outside the allow-list is refused', async () => {
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.2/32'], timeoutMs: 15_000, maxBytes: MiB, maxRedirects: 3 });
    const to = encodeURIComponent(forbidden.url('/images/camera.png'));
    await assert.rejects(fetcher.fetch(allowed.url(`/redirect?n=1&to=${to}`)), invalidUrl);
    assert.equal(forbidden.connections, 0);
  });
});
