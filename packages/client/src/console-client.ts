/**
 * The console API (`/console/api/v1`) for programs: e-mail/password login, bearer tokens
 * that refresh by themselves, and the key operations. Where tokens live is the caller's
 * choice (a TokenStore): memory in a browser tab, a 0600 file for the CLI.
 */
import { ApiError } from './errors.js';
import { readJson, Transport, type RetryMode, type TransportOptions } from './transport.js';
import type { ApiKey, Body, Ok, Usage, User } from './wire.js';

export interface Tokens {
  accessToken: string;
  /** Epoch ms when the access token stops working. */
  accessExpiresAt: number;
  refreshToken: string;
  refreshExpiresAt?: number;
  /**
   * scheme://host:port of the server that issued them. They are sent to that server only:
   * a client for another base URL finds them and asks for a new login. A store must keep
   * this field; tokens without it are never sent.
   */
  origin: string;
}

export interface TokenStore {
  load(): Promise<Tokens | null>;
  save(tokens: Tokens): Promise<void>;
  clear(): Promise<void>;
  /**
   * Runs `fn` holding a lock shared by every user of the same tokens (other processes too),
   * so only one of them spends the refresh token. Optional for single-process stores.
   */
  locked?<T>(fn: () => Promise<T>): Promise<T>;
}

export class MemoryTokenStore implements TokenStore {
  private tokens: Tokens | null = null;
  async load() {
    return this.tokens;
  }
  async save(t: Tokens) {
    this.tokens = t;
  }
  async clear() {
    this.tokens = null;
  }
}

/** No usable session: log in (again). */
export class NotLoggedInError extends Error {
  constructor(message = 'not logged in') {
    super(message);
    this.name = 'NotLoggedInError';
  }
}

/**
 * The account has two-factor authentication: the password was right, a code is still needed.
 * Finish with `client.completeMfa(err.mfaToken, code)` within `expiresInSeconds`, or pass
 * `{ mfaCode }` to `login` to be asked for the code instead of getting this error.
 */
export class MfaRequiredError extends Error {
  constructor(
    readonly mfaToken: string,
    readonly expiresInSeconds: number,
  ) {
    super('this account has two-factor authentication: a code from the authenticator app (or a recovery code) is needed');
    this.name = 'MfaRequiredError';
  }
}

/** Asked for the authenticator app's 6-digit code (or a recovery code) when the account has two-factor authentication. */
export type MfaCodeProvider = () => string | Promise<string>;

export type { ApiKey, KeyStatus, Membership, Role, Usage, UsageDay, User } from './wire.js';

export type NewKey = Body<'consoleCreateKey'>;
export type KeyChanges = Body<'consoleUpdateKey'>;

export interface ConsoleClientOptions extends TransportOptions {
  store?: TokenStore;
  /** Refresh this long before the access token expires (ms). Default 30 s. */
  refreshSkewMs?: number;
}

const PREFIX = '/console/api/v1';

/** A new session; a browser's answer (cookies) has no tokens in it, which a program never asks for. */
type TokenAnswer = Ok<'consoleRefresh'>;

function tokensFrom(a: TokenAnswer | undefined, origin: string, now = Date.now()): Tokens {
  if (typeof a?.access_token !== 'string' || typeof a.refresh_token !== 'string') {
    throw new Error('unexpected response from the server: no tokens in the login answer');
  }
  const t: Tokens = { accessToken: a.access_token, accessExpiresAt: now + a.access_expires_in * 1000, refreshToken: a.refresh_token, origin };
  if (typeof a.refresh_expires_in === 'number') t.refreshExpiresAt = now + a.refresh_expires_in * 1000;
  return t;
}

export class ConsoleClient {
  readonly store: TokenStore;
  private readonly transport: Transport;
  private readonly skew: number;

  constructor(options: ConsoleClientOptions) {
    this.transport = new Transport(options);
    this.store = options.store ?? new MemoryTokenStore();
    this.skew = options.refreshSkewMs ?? 30_000;
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** The server this client talks to; only tokens issued by it are ever sent. */
  get origin(): string {
    return this.transport.origin;
  }

  /**
   * The stored tokens if this server issued them; null when there are none. Tokens from
   * another server (the base URL changed) are refused, never sent here.
   */
  private async ownTokens(): Promise<Tokens | null> {
    const tokens = await this.store.load();
    if (tokens && tokens.origin !== this.origin) {
      throw new NotLoggedInError(
        `not logged in to ${this.origin}: the saved login is for ${tokens.origin ?? 'an unrecorded server'} and is never sent to another; log in again`,
      );
    }
    return tokens;
  }

  /**
   * Never retried: a repeated login counts against the login throttle. For an account with
   * two-factor authentication, `mfaCode` is asked for the code; without it, MfaRequiredError.
   */
  async login(email: string, password: string, options: { mfaCode?: MfaCodeProvider } = {}): Promise<User | undefined> {
    const res = await this.transport.send({ method: 'POST', path: `${PREFIX}/auth/login`, body: { email, password } satisfies Body<'consoleLogin'>, retry: 'never' });
    const answer = (await readJson(res)) as Ok<'consoleLogin'> | undefined;
    if (answer !== undefined && 'mfa_required' in answer) {
      if (!options.mfaCode) throw new MfaRequiredError(answer.mfa_token, answer.mfa_expires_in);
      return this.completeMfa(answer.mfa_token, await options.mfaCode());
    }
    await this.store.save(tokensFrom(answer, this.origin));
    return answer?.user;
  }

  /** The second step of a sign-in: a 6-digit code, or a recovery code (anything else than digits). Never retried. */
  async completeMfa(mfaToken: string, code: string): Promise<User | undefined> {
    const typed = code.trim();
    const second = /^[\d\s]+$/.test(typed) ? { code: typed } : { recovery_code: typed };
    const res = await this.transport.send({ method: 'POST', path: `${PREFIX}/auth/mfa`, body: { mfa_token: mfaToken, ...second } satisfies Body<'consoleLoginSecondFactor'>, retry: 'never' });
    const answer = (await readJson(res)) as TokenAnswer | undefined;
    await this.store.save(tokensFrom(answer, this.origin));
    return answer?.user;
  }

  /**
   * Revokes the session on the server (best effort) and forgets the tokens here. Tokens of
   * another server are left alone (NotLoggedInError): log out with that base URL.
   */
  async logout(): Promise<void> {
    const tokens = await this.ownTokens();
    try {
      if (tokens) {
        const body = { refresh_token: tokens.refreshToken } satisfies Body<'consoleLogout'>;
        await this.transport.send({ method: 'POST', path: `${PREFIX}/auth/logout`, retry: 'never', headers: { authorization: `Bearer ${tokens.accessToken}` }, body });
      }
    } catch (err) {
      // An expired or already revoked session is as logged out as it gets.
      if (!(err instanceof ApiError && err.status === 401)) throw err;
    } finally {
      await this.store.clear();
    }
  }

  me(): Promise<Ok<'consoleGetMe'>> {
    return this.json('GET', '/me');
  }

  async listKeys(org: string): Promise<ApiKey[]> {
    return (await this.json<Ok<'consoleListKeys'>>('GET', `/orgs/${encodeURIComponent(org)}/keys`)).keys;
  }

  /** Creates a key; `secret` is the key itself, shown this once. Never retried (it could create two). */
  createKey(org: string, key: NewKey): Promise<Ok<'consoleCreateKey'>> {
    return this.json('POST', `/orgs/${encodeURIComponent(org)}/keys`, key, 'never');
  }

  async updateKey(org: string, id: string, changes: KeyChanges): Promise<ApiKey> {
    return (await this.json<Ok<'consoleUpdateKey'>>('PATCH', `${this.keyPath(org, id)}`, changes)).key;
  }

  async setKeyStatus(org: string, id: string, action: 'suspend' | 'resume' | 'revoke'): Promise<ApiKey> {
    // The three actions answer alike (consoleSuspendKey, consoleResumeKey, consoleRevokeKey).
    return (await this.json<Ok<'consoleSuspendKey'>>('POST', `${this.keyPath(org, id)}/${action}`, {})).key;
  }

  usage(org: string, options: { days?: number; keyId?: string } = {}): Promise<Usage> {
    const q = new URLSearchParams({ days: String(options.days ?? 30) });
    if (options.keyId) q.set('key_id', options.keyId);
    return this.json('GET', `/orgs/${encodeURIComponent(org)}/usage?${q}`);
  }

  /** Any console API call, with the bearer token and one refresh on an expired token. */
  async json<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, retry?: RetryMode): Promise<T> {
    let tokens = await this.ownTokens();
    if (!tokens) throw new NotLoggedInError();
    if (tokens.accessExpiresAt - this.skew <= Date.now()) tokens = await this.refresh(tokens);
    const mode: RetryMode = retry ?? (method === 'GET' || method === 'PATCH' ? 'idempotent' : 'refused-only');
    const send = (t: Tokens) =>
      this.transport.send({ method, path: `${PREFIX}${path}`, body, retry: mode, headers: { authorization: `Bearer ${t.accessToken}` } });
    let res: Response;
    try {
      res = await send(tokens);
    } catch (err) {
      // The clock may disagree with the server's, or the token was revoked: refresh once.
      if (!(err instanceof ApiError && err.status === 401)) throw err;
      res = await send(await this.refresh(tokens));
    }
    return (await readJson(res)) as T;
  }

  /**
   * Exchanges the refresh token for new tokens, once across every process sharing the store:
   * whoever takes the lock second finds the tokens already rotated and uses them. A spent
   * refresh token presented again would end the whole session (reuse detection), so this
   * call is never retried.
   */
  async refresh(used: Tokens): Promise<Tokens> {
    const run = async (): Promise<Tokens> => {
      const current = await this.ownTokens();
      if (!current) throw new NotLoggedInError();
      if (current.refreshToken !== used.refreshToken) return current;
      try {
        const res = await this.transport.send({ method: 'POST', path: `${PREFIX}/auth/refresh`, body: { refresh_token: current.refreshToken } satisfies Body<'consoleRefresh'>, retry: 'never' });
        const fresh = tokensFrom((await readJson(res)) as TokenAnswer, this.origin);
        await this.store.save(fresh);
        return fresh;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          await this.store.clear();
          throw new NotLoggedInError(`the session has ended (${err.errorCode}); log in again`);
        }
        throw err;
      }
    };
    return this.store.locked ? this.store.locked(run) : run();
  }

  private keyPath(org: string, id: string): string {
    return `/orgs/${encodeURIComponent(org)}/keys/${encodeURIComponent(id)}`;
  }
}
