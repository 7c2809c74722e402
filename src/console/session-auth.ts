/**
 * Who is calling the console API. Programs send `Authorization: Bearer <access token>`;
 * browsers carry the access token in an HttpOnly cookie and must echo the CSRF cookie in
 * the x-csrf-token header on unsafe methods (double submit; the cookies are also
 * SameSite=Strict). An x-api-key never authenticates here.
 */
import { timingSafeEqual } from 'node:crypto';
import '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { ApiError } from '../api/errors.js';
import { sessionForAccessToken } from '../store/sessions.js';
import { getUser } from '../store/users.js';

export const CSRF_HEADER = 'x-csrf-token';

export interface CookieSpec {
  name: string;
  path: string;
}

/** The console's three cookies as one request uses them, and whether they are Secure. */
export interface ConsoleCookies {
  secure: boolean;
  access: CookieSpec;
  refresh: CookieSpec;
  csrf: CookieSpec;
}

/**
 * Secure cookies (https) carry the `__Host-` prefix: a browser accepts such a cookie only
 * Secure, from this very host, with Path=/ and no Domain, so no sibling subdomain and no
 * plain-http answer can plant or overwrite one (cookie tossing: a planted CSRF cookie would
 * defeat the double submit, a planted session cookie would sign the victim in as someone
 * else). Cookies under the plain names are then ignored. The prefix forces Path=/, so all
 * three are sent with every request to the host; the API never reads a cookie.
 */
export const HOST_COOKIES: ConsoleCookies = {
  secure: true,
  access: { name: '__Host-rc_access', path: '/' },
  refresh: { name: '__Host-rc_refresh', path: '/' },
  csrf: { name: '__Host-rc_csrf', path: '/' },
};

/** Plain http (local development): browsers refuse `__Host-` cookies that are not Secure. */
export const PLAIN_COOKIES: ConsoleCookies = {
  secure: false,
  access: { name: 'rc_access', path: '/console' },
  refresh: { name: 'rc_refresh', path: '/console/api/v1/auth' },
  csrf: { name: 'rc_csrf', path: '/console' },
};

export interface ConsoleUser {
  id: string;
  email: string;
  sessionId: string;
  via: 'bearer' | 'cookie';
  /** The password is temporary (set by an operator): only the routes that change it are open. */
  passwordMustChange: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleUser?: ConsoleUser;
    /** Set by the console plugin's consoleCookiesHook. */
    consoleCookies?: ConsoleCookies;
  }
}

/**
 * onRequest hook of the console plugin: the cookies are Secure, so `__Host-`, when the console
 * is published over https (`secureCookies`, from PUBLIC_BASE_URL) or the request came over TLS.
 */
export function consoleCookiesHook(secureCookies: boolean) {
  return async function cookiesHook(request: FastifyRequest): Promise<void> {
    request.consoleCookies = secureCookies || request.protocol === 'https' ? HOST_COOKIES : PLAIN_COOKIES;
  };
}

/** The cookies this request uses (set and read under the same names). */
export function cookiesOf(request: FastifyRequest): ConsoleCookies {
  if (!request.consoleCookies) throw new Error('the console plugin is missing its cookie hook');
  return request.consoleCookies;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Throws CSRF_FAILED unless the header repeats the CSRF cookie. */
export function checkCsrf(request: FastifyRequest): void {
  const cookie = request.cookies[cookiesOf(request).csrf.name];
  const header = request.headers[CSRF_HEADER];
  if (!cookie || typeof header !== 'string' || !sameSecret(cookie, header)) throw new ApiError('CSRF_FAILED');
}

/** True when this request came from the browser (no bearer token, session cookies instead). */
export function usesCookies(request: FastifyRequest): boolean {
  const { access, refresh } = cookiesOf(request);
  return bearerToken(request) === undefined && (request.cookies[access.name] !== undefined || request.cookies[refresh.name] !== undefined);
}

/**
 * onRequest hook of every authenticated console route. A user whose password is temporary
 * (`password_must_change`, set by an operator) is refused everywhere with
 * PASSWORD_CHANGE_REQUIRED, except on the routes that pass `{ whilePasswordMustChange: true }`
 * (GET /me and POST /me/password; signing out does not use this hook). Checked here, with
 * the user the session already loads, so no route can forget it.
 */
export function requireSession(db: Knex, options: { whilePasswordMustChange?: boolean } = {}) {
  return async function sessionHook(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const found = await presentedSession(db, request);
    if (found === 'none') throw new ApiError('UNAUTHENTICATED');
    if (found === 'invalid') throw new ApiError('UNAUTHENTICATED', 'The access token is invalid or has expired; refresh it or sign in again');
    if (found.passwordMustChange && !options.whilePasswordMustChange) throw new ApiError('PASSWORD_CHANGE_REQUIRED');
    request.consoleUser = found;
  };
}

/**
 * The signed-in user on a route that also works without a session (accepting an
 * invitation), or null. A cookie session on an unsafe method still needs the CSRF header;
 * a session whose password must change is refused (PASSWORD_CHANGE_REQUIRED) like everywhere.
 */
export async function optionalSession(db: Knex, request: FastifyRequest): Promise<ConsoleUser | null> {
  const found = await presentedSession(db, request);
  if (typeof found === 'string') return null;
  if (found.passwordMustChange) throw new ApiError('PASSWORD_CHANGE_REQUIRED');
  return found;
}

async function presentedSession(db: Knex, request: FastifyRequest): Promise<ConsoleUser | 'none' | 'invalid'> {
  const bearer = bearerToken(request);
  const token = bearer ?? request.cookies[cookiesOf(request).access.name];
  if (!token) return 'none';
  const via = bearer !== undefined ? 'bearer' : 'cookie';
  if (via === 'cookie' && !SAFE_METHODS.has(request.method)) checkCsrf(request);
  // Refuses revoked and expired sessions, and any signed in before the latest password change.
  const session = await sessionForAccessToken(db, token);
  if (!session) return 'invalid';
  const user = await getUser(db, session.userId);
  return { id: user.id, email: user.email, sessionId: session.sessionId, via, passwordMustChange: user.password_must_change };
}

export function userOf(request: FastifyRequest): ConsoleUser {
  if (!request.consoleUser) throw new Error('route is missing its session hook');
  return request.consoleUser;
}
