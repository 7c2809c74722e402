/**
 * One HTTP call with a per-attempt timeout, the caller's AbortSignal, and retries that can
 * never charge twice: how far a call may be retried is the caller's to say (`retry`).
 */
import { checkBaseUrl } from './base-url.js';
import { ApiError, apiErrorFrom, RedirectError, TransportError } from './errors.js';

export interface TransportOptions {
  /** https://…, or http:// to loopback (127.0.0.0/8, ::1, localhost) only. */
  baseUrl: string;
  /**
   * Allow plain http to hosts other than loopback: the API key, password and tokens then
   * travel unencrypted. For a lab network you trust; never for the internet. Default false.
   */
  allowInsecureHttp?: boolean;
  /** Per attempt, in ms. Default 35 s: just above the service's 29 s sync limit, as the spec advises. */
  timeoutMs?: number;
  /** Further attempts after the first. Default 3. */
  maxRetries?: number;
  /** A 429/503 asking to wait longer than this (seconds) is thrown, not waited out. Default 60. */
  maxRetryAfterSeconds?: number;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Told before each retry (for progress lines and logs). */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

/**
 * - `idempotent`: repeating the call cannot do the work twice (sync with its external_id,
 *   lookup, feedback): retried after connection errors, timeouts, 5xx, 409 in progress and 429.
 * - `refused-only`: the call is not idempotent (batch): retried only when the server refused
 *   it before doing anything (429) or the connection was never made.
 * - `never`.
 */
export type RetryMode = 'idempotent' | 'refused-only' | 'never';

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  retry: RetryMode;
  signal?: AbortSignal;
}

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
// Codes that say the connection was never made, so nothing reached the server.
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new TransportError('aborted', 'aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TransportError('aborted', 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  readonly baseUrl: string;
  /** scheme://host:port of the base URL: the one server credentials are sent to. */
  readonly origin: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryAfter: number;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: TransportOptions) {
    this.origin = checkBaseUrl(options.baseUrl, options.allowInsecureHttp).origin;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 35_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryAfter = options.maxRetryAfterSeconds ?? 60;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * The response of the first attempt that succeeded (2xx); otherwise the last error. A
   * redirect is never followed (RedirectError, never retried).
   */
  async send(call: Call): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let failure: ApiError | TransportError;
      let unsent = false;
      try {
        const res = await this.attempt(call);
        if (res.ok) return res;
        failure = await apiErrorFrom(res);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        failure = err;
        unsent = err.kind === 'network' && UNSENT_CODES.has(errorCode(err.cause) ?? '');
      }
      const delay = attempt < this.maxRetries ? this.retryDelay(call.retry, failure, unsent, attempt) : undefined;
      if (delay === undefined) throw failure;
      this.options.onRetry?.({ attempt: attempt + 1, delayMs: delay, reason: failure instanceof ApiError ? `${failure.status} ${failure.errorCode}` : failure.message });
      await sleep(delay, call.signal);
    }
  }

  /** Milliseconds to wait before retrying, or undefined when this failure must not be retried. */
  private retryDelay(mode: RetryMode, failure: ApiError | TransportError, unsent: boolean, attempt: number): number | undefined {
    if (mode === 'never') return undefined;
    const backoff = Math.min(8_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
    if (failure instanceof TransportError) {
      if (failure.kind === 'aborted') return undefined;
      return mode === 'idempotent' || unsent ? backoff : undefined;
    }
    const retryAfter = failure.retryAfterSeconds;
    if (retryAfter !== undefined && retryAfter > this.maxRetryAfter) return undefined;
    if (failure.status === 429) {
      // A spent monthly quota does not come back within a retry's wait.
      if (failure.errorCode === 'MONTHLY_QUOTA_EXCEEDED') return undefined;
      return retryAfter !== undefined ? retryAfter * 1000 : backoff;
    }
    if (mode !== 'idempotent') return undefined;
    if (failure.status === 409 && failure.errorCode === 'REQUEST_IN_PROGRESS') return backoff;
    if (RETRYABLE_STATUS.has(failure.status)) return retryAfter !== undefined ? retryAfter * 1000 : backoff;
    return undefined;
  }

  private async attempt(call: Call): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    let body: string | undefined;
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.body);
    }
    const url = `${this.baseUrl}${call.path}`;
    let res: Response;
    try {
      // 'manual': fetch would follow a redirect with x-api-key still attached (it strips only
      // Authorization), and a 307/308 would resend the body (a password, a refresh token).
      res = await this.fetchImpl(url, { method: call.method, headers, body, signal, redirect: 'manual' });
    } catch (err) {
      if (call.signal?.aborted) throw new TransportError('the call was aborted', 'aborted', { cause: err });
      if (timeout.aborted) throw new TransportError(`no answer within ${this.timeoutMs} ms`, 'timeout', { cause: err });
      const code = errorCode(err);
      throw new TransportError(`could not reach ${this.baseUrl}${code ? ` (${code})` : ''}`, 'network', { cause: err });
    }
    // Node shows the 3xx itself; a browser gives an 'opaqueredirect' with status 0 and no headers.
    if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
      await res.body?.cancel().catch(() => undefined);
      throw new RedirectError(res.status, locationOf(res, url));
    }
    return res;
  }
}

function locationOf(res: Response, requestUrl: string): string | undefined {
  const location = res.headers.get('location');
  if (!location) return undefined;
  try {
    return new URL(location, requestUrl).href;
  } catch {
    return undefined;
  }
}

export async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
