/**
 * The console API from the browser: session cookies (HttpOnly, set by the server), the
 * CSRF cookie echoed in x-csrf-token on unsafe methods, one silent refresh on an
 * expired access token (one at a time across tabs).
 */
import type { components } from '../../../packages/client/src/openapi.js';
import type { Body, Ok } from '../../../packages/client/src/wire.js';

export const BASE = '/console/api/v1';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The CSRF cookie, the only cookie the page reads: `__Host-rc_csrf` when the server sets Secure
 * cookies (https), `rc_csrf` over plain http (local development). The `__Host-` one wins; the
 * server decides which name counts, so echoing a planted plain one only fails the check.
 */
function csrf(): string {
  const jar = new Map<string, string>();
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const value = jar.get('__Host-rc_csrf') ?? jar.get('rc_csrf');
  return value === undefined ? '' : decodeURIComponent(value);
}

async function raw(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> {
  const headers: Record<string, string> = { ...extra };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrf();
  return fetch(BASE + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
}

async function parse<T>(res: Response): Promise<T> {
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new ApiFailure(res.status, String((data.error_code as string | undefined) ?? 'UNKNOWN'), String((data.message as string | undefined) ?? res.statusText));
  return data as T;
}

let onSignedOut: () => void = () => {};
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

/** The Web Lock every tab of the console takes to refresh (same origin, so one lock for all tabs). */
const REFRESH_LOCK = 'recognition-console-refresh';

let refreshing: Promise<boolean> | null = null;
/**
 * One refresh at a time, in this tab (callers share it) and across tabs (a Web Lock). Each
 * refresh spends the refresh cookie, which all tabs share; a tab that waited for another's
 * refresh sends the cookie that refresh left (the browser reads the jar anew for each
 * request), so it exchanges the new token, never the spent one, and two tabs never present
 * the same token. Where Web Locks are missing (an insecure context), the server's grace for
 * a token just exchanged covers the race (docs/console.md).
 */
function refresh(): Promise<boolean> {
  refreshing ??= exclusiveRefresh()
    .catch(() => false)
    .finally(() => setTimeout(() => (refreshing = null), 0));
  return refreshing;
}

async function exclusiveRefresh(): Promise<boolean> {
  const exchange = () => raw('POST', '/auth/refresh', {}).then((r) => r.ok);
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  return locks ? await locks.request(REFRESH_LOCK, exchange) : exchange();
}

export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  let res = await raw(method, path, body);
  if (res.status === 401 && !path.startsWith('/auth/')) {
    if (await refresh()) res = await raw(method, path, body);
    if (res.status === 401) {
      onSignedOut();
      throw new ApiFailure(401, 'UNAUTHENTICATED', 'Your session has ended; sign in again');
    }
  }
  return parse<T>(res);
}

/** A call that needs no session (invitations): no silent refresh, no redirect to sign-in on 401. */
export async function publicCall<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  return parse<T>(await raw(method, path, body));
}

/** The signed-in user, or null (refreshing once if the access cookie expired), without leaving the page. */
export async function currentUser(): Promise<Me | null> {
  let res = await raw('GET', '/me');
  if (res.status === 401 && (await refresh())) res = await raw('GET', '/me');
  return res.ok ? ((await res.json()) as Me) : null;
}

/** Signs in; for an account with two-factor authentication, answers the challenge token for `completeMfa` (no session yet). */
export async function login(email: string, password: string): Promise<{ mfaToken?: string }> {
  const answer = await parse<Ok<'consoleLogin'>>(await raw('POST', '/auth/login', { email, password } satisfies Body<'consoleLogin'>, { 'x-console-session': 'cookie' }));
  return 'mfa_required' in answer ? { mfaToken: answer.mfa_token } : {};
}

/** A 6-digit code from the authenticator app, or else a recovery code, as the API's body fields. */
export function secondFactor(typed: string): Omit<Body<'consoleLoginSecondFactor'>, 'mfa_token'> {
  const t = typed.trim();
  return /^[\d\s]+$/.test(t) ? { code: t.replace(/\s/g, '') } : { recovery_code: t };
}

/** The second step of a sign-in with two-factor authentication: the session cookies are set by the answer. */
export async function completeMfa(mfaToken: string, typed: string): Promise<void> {
  await parse(await raw('POST', '/auth/mfa', { mfa_token: mfaToken, ...secondFactor(typed) } satisfies Body<'consoleLoginSecondFactor'>, { 'x-console-session': 'cookie' }));
}

export async function logout(): Promise<void> {
  await raw('POST', '/auth/logout').catch(() => undefined);
}

// ---------------------------------------------------------------- wire types
// Generated from the server's /openapi.json (npm run generate), named by the SDK's wire.ts.
// Type-only imports: the bundle carries none of the client package.

type Schemas = components['schemas'];
export type { Body, Ok };

export type Key = Schemas['ConsoleKey'];
export type Me = Schemas['ConsoleMe'];
export type Role = Schemas['ConsoleRole'];
export type Invitation = Schemas['ConsoleInvitation'];
export type InvitationInfo = Schemas['ConsoleInvitationInfo'];
export type Usage = Schemas['ConsoleUsage'];
export type Detection = Schemas['Detection'];

/** A role's rank: each may do what the ones below it may (the order of ConsoleRole in the document). */
export const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
