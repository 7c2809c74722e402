/** Aligned tables for people, JSON for scripts, and exit codes by class of failure. */
import { ApiError, InsecureBaseUrlError, NotLoggedInError, RedirectError, TransportError } from '@recognition-service/client';

export const EXIT = {
  ok: 0,
  /** Anything not classed below. */
  failure: 1,
  /** Wrong flags or arguments; the call never left this machine. */
  usage: 2,
  /** Not logged in, bad or refused API key, a role that may not do it (401/403). */
  auth: 3,
  /** Rate limit, monthly quota or balance (429/402). */
  limits: 4,
  /** The server failed or could not be reached (5xx, timeouts, connection errors). */
  server: 5,
  /** The call worked but some images ended in ERROR/FAILED. */
  partial: 6,
} as const;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The exit code and one-line message for an error, by class. */
export function classify(err: unknown): { code: number; message: string } {
  if (err instanceof UsageError || err instanceof InsecureBaseUrlError) return { code: EXIT.usage, message: err.message };
  if (err instanceof NotLoggedInError) return { code: EXIT.auth, message: `${err.message} (run: recog-client login)` };
  if (err instanceof ApiError) {
    const wait = err.retryAfterSeconds !== undefined ? ` (retry after ${err.retryAfterSeconds} s)` : '';
    const message = `${err.status} ${err.errorCode}: ${err.message}${wait}`;
    if (err.status === 401 || err.status === 403) return { code: EXIT.auth, message };
    if (err.status === 429 || err.status === 402) return { code: EXIT.limits, message };
    if (err.status >= 500 || err.status === 408) return { code: EXIT.server, message };
    if (err.status === 400 || err.status === 404 || err.status === 409 || err.status === 422) return { code: EXIT.failure, message };
    return { code: EXIT.failure, message };
  }
  // A redirect is a server misconfiguration or a moved service: nothing the user can retry.
  if (err instanceof RedirectError) return { code: EXIT.failure, message: err.message };
  if (err instanceof TransportError) return { code: EXIT.server, message: err.message };
  return { code: EXIT.failure, message: err instanceof Error ? err.message : String(err) };
}
