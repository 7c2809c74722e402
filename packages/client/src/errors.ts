/** Errors the client throws: one for answers the server gave, one for answers it never gave. */

/** The server answered with an error status and (normally) the contract's error body. */
export class ApiError extends Error {
  /** Seconds the server asked us to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds?: number;
  constructor(
    readonly status: number,
    /** The body's `error` (snake_case type or HTTP phrase). */
    readonly error: string,
    /** The machine-readable code, e.g. RATE_LIMITED; 'UNKNOWN' when the body had none. */
    readonly errorCode: string,
    message: string,
    retryAfterSeconds?: number,
    readonly body?: unknown,
  ) {
    super(message || `${status} ${error}`);
    this.name = 'ApiError';
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** No answer: the connection failed, was cut, or the call timed out or was aborted. */
export class TransportError extends Error {
  constructor(
    message: string,
    /** 'network' (connection failed or cut), 'timeout' (our own limit), 'aborted' (the caller's signal). */
    readonly kind: 'network' | 'timeout' | 'aborted',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

/** Retry-After is either delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export async function apiErrorFrom(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  const o = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const error = typeof o.error === 'string' ? o.error : res.statusText || 'error';
  const code = typeof o.error_code === 'string' ? o.error_code : 'UNKNOWN';
  const message = typeof o.message === 'string' ? o.message : `${res.status} ${error}`;
  return new ApiError(res.status, error, code, message, parseRetryAfter(res.headers.get('retry-after')), body);
}

/**
 * The server answered with a redirect, which the client never follows: a redirect would
 * carry the API key (`x-api-key`), a password or a refresh token in its body to whatever
 * address the Location names. If the service has moved, use its new address as the base URL.
 */
export class RedirectError extends Error {
  constructor(
    /** 301, 302, 303, 307, 308…; 0 in a browser, which hides redirects from fetch. */
    readonly status: number,
    /** The Location, resolved against the request's URL; undefined when absent or hidden. */
    readonly location: string | undefined,
  ) {
    super(
      `the server answered ${status || 'a redirect'}${location ? ` to ${location}` : ''}; not followed, because credentials are never sent across a redirect` +
        (location ? ` (if the service has moved, use ${new URL(location).origin} as the base URL)` : ''),
    );
    this.name = 'RedirectError';
  }
}
