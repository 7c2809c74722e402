/**
 * SSRF-safe image download. Each hop (the URL, then every redirect target) is validated, its host
 * resolved once here, EVERY resolved address checked against the AddressPolicy, and the connection
 * pinned to exactly those addresses through the connector's lookup, so DNS cannot change its answer
 * between the check and the connect (rebinding). Time, size and redirect count are bounded.
 */
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import { MAX_IMAGE_URL_LENGTH } from '../contract/public-api.js';
import { AddressPolicy, parseIpLiteral } from './address-policy.js';
import { ImageError } from './errors.js';
import { MIME_BY_FORMAT, sniffImageFormat } from './sniff.js';
import type { FetchedImage, ImageFetcher } from './types.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable so tests can play DNS). */
export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>;

export interface ImageFetcherOptions {
  /** Ranges the fetcher may reach even though they are private or local (IMAGE_FETCH_ALLOW_CIDRS). */
  allowCidrs: string[];
  /** Budget for the whole download: DNS, connects, redirects and body. */
  timeoutMs: number;
  /** The body is abandoned as soon as it passes this many bytes. */
  maxBytes: number;
  maxRedirects: number;
  lookup?: LookupFn;
  /** Extra trusted CA certificates for https (tests, private PKI); the system roots stay trusted. */
  ca?: string | Buffer | Array<string | Buffer>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** getaddrinfo and c-ares codes for a resolver that failed, as opposed to an answer that the name has no address. */
const TRANSIENT_DNS_CODES = new Set(['EAI_AGAIN', 'ETIMEOUT', 'ESERVFAIL', 'ECONNREFUSED', 'EAI_MEMORY', 'EAI_SYSTEM']);
const USER_AGENT = 'recognition-service-image-fetcher/1';

export const systemLookup: LookupFn = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

function invalidUrl(message: string): ImageError {
  return new ImageError('INVALID_IMAGE_URL', message);
}

function downloadFailed(message: string, upstreamStatus?: number, cause?: unknown): ImageError {
  return new ImageError('IMAGE_DOWNLOAD_FAILED', message, upstreamStatus, cause === undefined ? undefined : { cause });
}

/** The host as a connector sees it: IPv6 literals without brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Waits for a promise but gives up when the signal aborts (dns.lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

type PinnedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** A lookup for the connector that answers only with the addresses already checked. */
function pinnedLookup(expectedHost: string, addresses: readonly ResolvedAddress[]): PinnedLookup {
  return (hostname, options, callback) => {
    if (hostname !== expectedHost) {
      callback(Object.assign(new Error(`unexpected lookup of ${hostname}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    if (options.all) callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

/** Stops reading a body we will not use; the abort it causes is expected, not an error to report. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function describeNetworkError(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string; message?: string }; message?: string };
  const code = e?.code ?? e?.cause?.code;
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the connection was reset';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'the connection timed out';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'the host is unreachable';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))) {
    return `the TLS handshake failed (${code})`;
  }
  return code ? `a network error occurred (${code})` : 'a network error occurred';
}

class SafeImageFetcher implements ImageFetcher {
  private readonly policy: AddressPolicy;
  private readonly lookup: LookupFn;

  constructor(private readonly opts: ImageFetcherOptions) {
    this.policy = new AddressPolicy(opts.allowCidrs);
    this.lookup = opts.lookup ?? systemLookup;
  }

  validate(url: string): void {
    this.parse(url, 'image_url');
  }

  /** Scheme, length, credentials and a literal-IP host; no lookup. Throws INVALID_IMAGE_URL. */
  private parse(raw: string, what: string): URL {
    if (typeof raw !== 'string' || raw.length === 0) throw invalidUrl(`${what} must be a non-empty string`);
    // In code points, as the contract's maxLength counts (a surrogate pair is one character);
    // a string of more than twice the limit in UTF-16 units is over it either way.
    const length = raw.length > 2 * MAX_IMAGE_URL_LENGTH ? raw.length : [...raw].length;
    if (length > MAX_IMAGE_URL_LENGTH) {
      throw invalidUrl(`${what} is ${length} characters; the limit is ${MAX_IMAGE_URL_LENGTH}`);
    }
    // The URL parser would quietly strip or encode these; refuse them, so what is stored is what was fetched.
    // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
    if (/[\u0000-\u001F\u007F]/.test(raw)) throw invalidUrl(`${what} contains control characters`);
    // A lone UTF-16 surrogate would be stored (and fetched) as U+FFFD: two URLs would collide.
    if (/\p{Cs}/u.test(raw)) throw invalidUrl(`${what} contains a lone UTF-16 surrogate`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalidUrl(`${what} is not a valid absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidUrl(`${what} must use http or https (got ${url.protocol.replace(/:$/, '')})`);
    }
    if (url.username !== '' || url.password !== '') throw invalidUrl(`${what} must not contain credentials`);
    if (url.hostname === '') throw invalidUrl(`${what} has no host`);
    // The WHATWG parser has already turned decimal, hex, octal and short IPv4 spellings into dotted form.
    const literal = parseIpLiteral(url.hostname);
    if (literal !== null) {
      const verdict = this.policy.check(literal);
      if (!verdict.allowed) {
        throw invalidUrl(`${what} points to ${url.hostname}, ${verdict.reason}, which is refused`);
      }
    }
    return url;
  }

  /** The checked addresses a hop may connect to. Throws INVALID_IMAGE_URL or IMAGE_DOWNLOAD_FAILED. */
  private async resolve(url: URL, signal: AbortSignal): Promise<ResolvedAddress[]> {
    const host = bareHost(url);
    const literal = parseIpLiteral(host);
    if (literal !== null) return [{ address: host, family: literal.kind() === 'ipv6' ? 6 : 4 }];
    // The socket layer skips lookup for anything it takes as an IP; such a host must have been judged above.
    if (net.isIP(host) !== 0) throw invalidUrl(`the image host "${host}" is an address that could not be checked`);
    // A name that does not exist and a name that resolves to a refused address get the very
    // same answer, so the API cannot tell which internal names exist (an internal DNS oracle).
    // What really happened stays on the error's `cause`, for the server's side only.
    const unusableHost = (cause: unknown) => new ImageError('INVALID_IMAGE_URL', `the image host "${host}" does not resolve to a public address`, undefined, { cause });
    let found: ResolvedAddress[];
    try {
      found = await untilAborted(this.lookup(host), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // A resolver that failed for now (not an answer about the name) may succeed on a retry.
      if (TRANSIENT_DNS_CODES.has((err as { code?: string })?.code ?? '')) {
        throw downloadFailed(`could not resolve the image host "${host}" right now (temporary DNS failure)`, undefined, err);
      }
      throw unusableHost(err);
    }
    if (found.length === 0) throw unusableHost(new Error(`"${host}" has no addresses`));
    for (const { address } of found) {
      const verdict = this.policy.check(address);
      if (!verdict.allowed) throw unusableHost(new Error(`"${host}" resolves to ${verdict.reason}`));
    }
    return found;
  }

  async fetch(rawUrl: string, options: { signal?: AbortSignal } = {}): Promise<FetchedImage> {
    let url = this.parse(rawUrl, 'image_url');
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    try {
      for (let redirects = 0; ; redirects++) {
        const addresses = await this.resolve(url, signal);
        const agent = this.pinnedAgent(url, addresses);
        try {
          const response = await this.send(url, agent, signal);
          const status = response.statusCode;
          if (REDIRECT_STATUSES.has(status)) {
            discard(response.body); // a redirect body is never needed
            if (redirects >= this.opts.maxRedirects) {
              throw downloadFailed(`the image URL redirected more than ${this.opts.maxRedirects} times`, status);
            }
            const location = response.headers.location;
            if (typeof location !== 'string' || location === '') {
              throw downloadFailed(`the image URL answered HTTP ${status} without a Location`, status);
            }
            let next: string;
            try {
              next = new URL(location, url).href;
            } catch {
              throw downloadFailed(`the image URL redirected to an invalid location`, status);
            }
            const target = this.parse(next, 'image_url redirect');
            // Once on https, stay on it: a redirect to plain http would send the rest in clear text.
            if (url.protocol === 'https:' && target.protocol === 'http:') {
              throw invalidUrl('image_url redirects from https to plain http, which is refused');
            }
            url = target;
            continue;
          }
          if (status < 200 || status > 299) {
            discard(response.body);
            throw downloadFailed(`the image URL answered HTTP ${status}`, status);
          }
          const bytes = await this.readBody(response, signal);
          const format = sniffImageFormat(bytes);
          if (format === null) {
            throw downloadFailed('the image URL did not return a JPEG, PNG, WebP or GIF image', status);
          }
          return { bytes, format, mime: MIME_BY_FORMAT[format], finalUrl: url.href, status };
        } finally {
          agent.destroy().catch(() => undefined);
        }
      }
    } catch (err) {
      if (err instanceof ImageError) throw err;
      if (options.signal?.aborted) throw downloadFailed('the image download was cancelled', undefined, options.signal.reason);
      if (deadline.aborted) throw downloadFailed(`the image download took longer than ${this.opts.timeoutMs} ms`, undefined, err);
      throw downloadFailed(`could not download the image: ${describeNetworkError(err)}`, undefined, err);
    }
  }

  /** One connection pool per hop, whose connector may only reach the checked addresses. */
  private pinnedAgent(url: URL, addresses: ResolvedAddress[]): Agent {
    return new Agent({
      connections: 1,
      pipelining: 0,
      connect: {
        lookup: pinnedLookup(bareHost(url), addresses),
        timeout: this.opts.timeoutMs,
        ...(this.opts.ca !== undefined ? { ca: this.extendedCa() } : {}),
      },
    });
  }

  private extendedCa(): Array<string | Buffer> {
    const extra = Array.isArray(this.opts.ca) ? this.opts.ca : [this.opts.ca as string | Buffer];
    // Passing `ca` replaces Node's default roots; keep them so public https URLs still verify.
    return [...tls.rootCertificates, ...extra];
  }

  private send(url: URL, agent: Agent, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return request(url, {
      method: 'GET',
      dispatcher: agent,
      signal,
      headers: { accept: 'image/*', 'accept-encoding': 'identity', 'user-agent': USER_AGENT },
      headersTimeout: this.opts.timeoutMs,
      bodyTimeout: this.opts.timeoutMs,
    });
  }

  /** Reads at most maxBytes, refusing early on a declared length and stopping mid-stream otherwise. */
  private async readBody(response: Dispatcher.ResponseData, signal: AbortSignal): Promise<Buffer> {
    const { maxBytes } = this.opts;
    const tooLarge = () => downloadFailed(`the image is larger than ${maxBytes} bytes`, response.statusCode);
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      discard(response.body);
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        discard(response.body);
        throw tooLarge();
      }
      chunks.push(chunk);
      if (signal.aborted) break;
    }
    signal.throwIfAborted();
    return Buffer.concat(chunks, total);
  }
}

/** An SSRF-safe ImageFetcher (see docs/images.md for the policy). */
export function createImageFetcher(opts: ImageFetcherOptions): ImageFetcher {
  return new SafeImageFetcher(opts);
}
