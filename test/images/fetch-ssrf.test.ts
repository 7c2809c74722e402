/**
 * SSRF refusals of the image fetcher. A server on 127.0.0.1 counts TCP connections: every URL below
 * would reach it (or another internal address) if the policy failed, and it must see none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ImageError } from '../../src/images/errors.js';
import { createImageFetcher, type LookupFn, type ResolvedAddress } from '../../src/images/fetch.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

const PUBLIC_V4 = '93.184.216.34'; // any public unicast address; never connected to by these tests

/** Fake DNS: a table of names, counting calls; unknown names fail like NXDOMAIN. */
function tableLookup(table: Record<string, string[]>): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

function isInvalidUrl(err: unknown): boolean {
  assert.ok(err instanceof ImageError, `expected an ImageError, got ${String(err)}`);
  assert.equal(err.code, 'INVALID_IMAGE_URL', err.message);
  assert.equal(err.upstreamStatus, undefined);
  return true;
}

describe('image fetcher refuses internal addresses before connecting', () => {
  let sentinel: ImageServer;
  let port: number;
  const lookup = tableLookup({
    'loopback.test': ['127.0.0.1'],
    'loopback6.test': ['::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'private.test': ['10.1.2.3'],
    'metadata.test': ['169.254.169.254'],
    'metadata6.test': ['fd00:ec2::254'],
    'wireserver.test': ['168.63.129.16'],
    'oracle-imds.test': ['192.0.0.192'],
    'cgnat.test': ['100.64.1.1'],
    'ula.test': ['fd12:3456::1'],
    'linklocal6.test': ['fe80::1'],
    'good-then-bad.test': [PUBLIC_V4, '127.0.0.1'],
    'bad-then-good.test': ['127.0.0.1', PUBLIC_V4],
    'v6-good-v4-bad.test': ['2606:4700::1111', '10.0.0.1'],
  });
  const fetcher = createImageFetcher({ allowCidrs: [], timeoutMs: 2000, maxBytes: 1024 * 1024, maxRedirects: 3, lookup });

  before(async () => {
    sentinel = await startImageServer({ host: '127.0.0.1' });
    port = sentinel.port;
  });
  after(async () => {
    await sentinel.close();
  });

  // Literal hosts: refused by validate() too, with no lookup at all.
  const literalHosts = [
    ['loopback', '127.0.0.1'],
    ['loopback, other address in 127/8', '127.10.20.30'],
    ['decimal IPv4', '2130706433'],
    ['hex IPv4, short form', '0x7f.1'],
    ['hex IPv4, one number', '0x7f000001'],
    ['hex IPv4, dotted', '0x7f.0x0.0x0.0x1'],
    ['octal IPv4', '0177.0.0.1'],
    ['short IPv4', '127.1'],
    ['trailing-dot IPv4', '127.0.0.1.'],
    ['IPv6 loopback', '[::1]'],
    ['IPv4-mapped IPv6 loopback, dotted', '[::ffff:127.0.0.1]'],
    ['IPv4-mapped IPv6 loopback, hex', '[::ffff:7f00:1]'],
    ['IPv4-compatible IPv6 loopback', '[::127.0.0.1]'],
    ['IPv4-translated (RFC 6145) loopback', '[::ffff:0:7f00:1]'],
    ['NAT64 form of loopback', '[64:ff9b::127.0.0.1]'],
    ['NAT64 local-use prefix', '[64:ff9b:1::a00:1]'],
    ['unspecified 0.0.0.0', '0.0.0.0'],
    ['unspecified as "0"', '0'],
    ['IPv6 unspecified', '[::]'],
    ['private 10/8', '10.0.0.1'],
    ['private 172.16/12', '172.16.5.4'],
    ['private 192.168/16', '192.168.1.1'],
    ['CGNAT 100.64/10', '100.64.0.1'],
    ['link-local', '169.254.1.1'],
    ['cloud metadata', '169.254.169.254'],
    ['cloud metadata, decimal', '2852039166'],
    ['cloud metadata, IPv4-mapped', '[::ffff:169.254.169.254]'],
    ['cloud metadata, IPv6 (AWS)', '[fd00:ec2::254]'],
    ['Alibaba metadata', '100.100.100.200'],
    ['Azure WireServer (public unicast)', '168.63.129.16'],
    ['Azure WireServer, IPv4-mapped', '[::ffff:168.63.129.16]'],
    ['Azure WireServer, NAT64', '[64:ff9b::a83f:8110]'],
    ['Oracle Cloud IMDS', '192.0.0.192'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['reserved 240/4', '240.0.0.1'],
    ['documentation 192.0.2/24', '192.0.2.1'],
    ['documentation 198.51.100/24', '198.51.100.7'],
    ['documentation 203.0.113/24', '203.0.113.9'],
    ['benchmarking 198.18/15', '198.18.0.1'],
    ['IETF protocol assignments 192.0.0/24', '192.0.0.1'],
    ['IPv6 unique-local', '[fc00::1]'],
    ['IPv6 unique-local fd', '[fd00::1]'],
    ['IPv6 link-local', '[fe80::1]'],
    ['IPv6 site-local (deprecated)', '[fec0::1]'],
    ['IPv6 multicast', '[ff02::1]'],
    ['IPv6 documentation', '[2001:db8::1]'],
    ['IPv4-mapped private', '[::ffff:10.0.0.1]'],
    ['6to4 of loopback', '[2002:7f00:1::1]'],
    ['Teredo', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]'],
    ['unassigned IPv6 outside 2000::/3', '[4000::1]'],
  ] as const;

  for (const [name, host] of literalHosts) {
    test(`refuses ${name} (${host})`, async () => {
      const url = `http://${host}:${port}/images/camera.png`;
      assert.throws(() => fetcher.validate(url), isInvalidUrl);
      const before = lookup.calls.length;
      await assert.rejects(fetcher.fetch(url), isInvalidUrl);
      assert.equal(lookup.calls.length, before, 'a literal address needs no lookup');
    });
  }

  const resolvedHosts = [
    ['a name resolving to loopback', 'loopback.test'],
    ['a name resolving to IPv6 loopback', 'loopback6.test'],
    ['a name resolving to IPv4-mapped loopback', 'mapped.test'],
    ['a name resolving to a private address', 'private.test'],
    ['a name resolving to the cloud metadata address', 'metadata.test'],
    ['a name resolving to the IPv6 cloud metadata address', 'metadata6.test'],
    ['a name resolving to Azure WireServer', 'wireserver.test'],
    ['a name resolving to Oracle Cloud IMDS', 'oracle-imds.test'],
    ['a name resolving to CGNAT', 'cgnat.test'],
    ['a name resolving to IPv6 ULA', 'ula.test'],
    ['a name resolving to IPv6 link-local', 'linklocal6.test'],
    ['a name resolving to one public then one loopback address', 'good-then-bad.test'],
    ['a name resolving to one loopback then one public address', 'bad-then-good.test'],
    ['a name resolving to public IPv6 and private IPv4', 'v6-good-v4-bad.test'],
  ] as const;

  for (const [name, host] of resolvedHosts) {
    test(`refuses ${name} (${host})`, async () => {
      const url = `http://${host}:${port}/images/camera.png`;
      fetcher.validate(url); // a name is only judged once resolved
      await assert.rejects(fetcher.fetch(url), (err) => {
        isInvalidUrl(err);
        // The same words as for a name that does not exist, and never the address (no internal DNS oracle).
        assert.equal((err as Error).message, `the image host "${host}" does not resolve to a public address`);
        assert.doesNotMatch((err as Error).message, /127\.0\.0\.1|10\.1\.2\.3|169\.254|::1\b/);
        return true;
      });
      assert.equal(lookup.calls.at(-1), host);
    });
  }

  test('a name that does not exist gets the very answer of a name resolving to an internal address', async () => {
    // Otherwise the API tells which internal names exist: probe "db.internal", "vault.internal", ...
    const answer = async (host: string) => {
      const err = await fetcher.fetch(`http://${host}:${port}/images/camera.png`).then(() => assert.fail('fetched'), (e: unknown) => e);
      assert.ok(err instanceof ImageError);
      return { code: err.code, upstreamStatus: err.upstreamStatus, message: err.message.replace(host, '<host>') };
    };
    const nxdomain = await answer('no-such-name.test');
    assert.deepEqual(nxdomain, { code: 'INVALID_IMAGE_URL', upstreamStatus: undefined, message: 'the image host "<host>" does not resolve to a public address' });
    for (const host of ['private.test', 'loopback.test', 'metadata.test', 'good-then-bad.test']) {
      assert.deepEqual(await answer(host), nxdomain, host);
    }
    const empty = createImageFetcher({ allowCidrs: [], timeoutMs: 2000, maxBytes: 1024, maxRedirects: 0, lookup: async () => [] });
    const err = await empty.fetch('http://empty.test/a.png').then(() => assert.fail('fetched'), (e: unknown) => e as ImageError);
    assert.deepEqual([err.code, err.message], ['INVALID_IMAGE_URL', 'the image host "empty.test" does not resolve to a public address']);
  });

  test('what really happened stays on the error\'s cause, for the server only', async () => {
    const err = await fetcher.fetch(`http://private.test:${port}/`).then(() => assert.fail('fetched'), (e: unknown) => e as ImageError);
    assert.match(String((err.cause as Error).message), /private address/);
    const nx = await fetcher.fetch(`http://no-such-name.test:${port}/`).then(() => assert.fail('fetched'), (e: unknown) => e as ImageError);
    assert.equal((nx.cause as { code?: string }).code, 'ENOTFOUND');
  });

  test('a resolver failing for now (EAI_AGAIN) is a download failure, retryable, not a refusal', async () => {
    const flaky = createImageFetcher({
      allowCidrs: [], timeoutMs: 2000, maxBytes: 1024, maxRedirects: 0,
      lookup: async (host) => {
        throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
      },
    });
    await assert.rejects(flaky.fetch('http://images.example/a.png'), (err) => {
      assert.ok(err instanceof ImageError);
      assert.equal(err.code, 'IMAGE_DOWNLOAD_FAILED');
      assert.match(err.message, /temporary DNS failure/);
      return true;
    });
  });

  test('refuses localhost through the system resolver', async () => {
    const system = createImageFetcher({ allowCidrs: [], timeoutMs: 2000, maxBytes: 1024, maxRedirects: 0 });
    await assert.rejects(system.fetch(`http://localhost:${port}/images/camera.png`), isInvalidUrl);
  });

  test('refuses https the same way', async () => {
    await assert.rejects(fetcher.fetch(`https://127.0.0.1:${port}/`), isInvalidUrl);
    await assert.rejects(fetcher.fetch(`https://loopback.test:${port}/`), isInvalidUrl);
  });

  test('an allow-list does not open the cloud metadata address', async () => {
    const wide = createImageFetcher({ allowCidrs: ['0.0.0.0/0', '::/0'], timeoutMs: 2000, maxBytes: 1024, maxRedirects: 0, lookup });
    assert.throws(() => wide.validate('http://169.254.169.254/latest/meta-data/'), isInvalidUrl);
    assert.throws(() => wide.validate('http://[fd00:ec2::254]/'), isInvalidUrl);
    assert.throws(() => wide.validate('http://168.63.129.16/machine?comp=goalstate'), isInvalidUrl);
    assert.throws(() => wide.validate('http://192.0.0.192/opc/v2/instance/'), isInvalidUrl);
    await assert.rejects(wide.fetch('http://wireserver.test/'), isInvalidUrl);
    await assert.rejects(wide.fetch('http://metadata.test/'), isInvalidUrl);
  });

  test('an allow-list for another range does not open loopback', async () => {
    const other = createImageFetcher({ allowCidrs: ['10.0.0.0/8'], timeoutMs: 2000, maxBytes: 1024, maxRedirects: 0, lookup });
    await assert.rejects(other.fetch(`http://127.0.0.1:${port}/images/camera.png`), isInvalidUrl);
    await assert.rejects(other.fetch(`http://loopback.test:${port}/images/camera.png`), isInvalidUrl);
  });

  test('the sentinel server on 127.0.0.1 saw no connection at all', () => {
    assert.equal(sentinel.connections, 0);
    assert.equal(sentinel.requests.length, 0);
  });
});

describe('image URL validation', () => {
  const fetcher = createImageFetcher({ allowCidrs: [], timeoutMs: 1000, maxBytes: 1024, maxRedirects: 3, lookup: tableLookup({}) });
  const bad = [
    ['ftp scheme', 'ftp://example.com/a.png'],
    ['file scheme', 'file:///etc/passwd'],
    ['gopher scheme', 'gopher://example.com/'],
    ['data URI', 'data:image/png;base64,iVBORw0KGgo='],
    ['javascript', 'javascript:alert(1)'],
    ['relative URL', '/images/a.png'],
    ['not a URL', 'not a url'],
    ['empty', ''],
    ['credentials', 'http://user:secret@example.com/a.png'],
    ['user only', 'http://user@example.com/a.png'],
    ['too long', `https://example.com/${'a'.repeat(2048)}`],
  ] as const;
  for (const [name, url] of bad) {
    test(`refuses ${name}`, async () => {
      assert.throws(() => fetcher.validate(url), isInvalidUrl);
      await assert.rejects(fetcher.fetch(url), isInvalidUrl);
    });
  }

  test('accepts public http and https URLs up to 2048 characters without any lookup', () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    assert.equal(url.length, 2048);
    fetcher.validate(url);
    fetcher.validate('http://example.com:8080/image.jpg?x=1');
    fetcher.validate(`http://${PUBLIC_V4}/a.png`);
    fetcher.validate('http://[2606:4700::1111]/a.png');
  });

  test('a bad allow-list entry is refused at construction', () => {
    assert.throws(() => createImageFetcher({ allowCidrs: ['10.0.0.0/33'], timeoutMs: 1, maxBytes: 1, maxRedirects: 0 }), /not a CIDR/);
  });
});
