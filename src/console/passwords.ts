/**
 * Password hashing with scrypt, Node's built-in memory-hard KDF, at OWASP's current
 * recommendation (N=2^17, r=8, p=1: 128 MiB and a fraction of a second per hash).
 * Stored as `scrypt$N$r$p$salt$hash` (base64url), so parameters can be raised later
 * and old hashes still verify. Comparison is constant-time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { createRequire } from 'node:module';

export const MIN_PASSWORD_LENGTH = 12;
/** Long enough for any passphrase; bounds the work one request can ask for. */
export const MAX_PASSWORD_LENGTH = 1024;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Compared case-insensitively, in the form scrypt hashes (NFC). */
const comparable = (s: string): string => s.normalize('NFC').toLowerCase();

/**
 * The common-passwords list of zxcvbn-ts (@zxcvbn-ts/language-common, MIT: 49,233 passwords
 * from breach corpora, most common first). Most are shorter than MIN_PASSWORD_LENGTH; the
 * longer ones (`qwerty123456`, `1qaz2wsx3edc`, `password1234`...) are what this check adds,
 * as ASVS 2.1.7 asks. Loaded on first use, when a password is set: loading it costs about
 * 30 ms, which every start of the API and of each `recog` command would pay otherwise.
 */
let commonPasswords: ReadonlySet<string> | undefined;

/** True if the password is on the bundled common-passwords list, ignoring case. */
export function isCommonPassword(password: string): boolean {
  if (commonPasswords === undefined) {
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    commonPasswords = new Set(dictionary['passwords-common'].map(comparable));
  }
  return commonPasswords.has(comparable(password));
}

/**
 * A clear reason the password is unacceptable, or null. With the account's e-mail, the
 * address and its local part are refused too (ignoring case).
 */
export function passwordProblem(password: string, email?: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `the password must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `the password must be at most ${MAX_PASSWORD_LENGTH} characters`;
  if (isCommonPassword(password)) return 'the password is on a list of common passwords; choose another';
  if (email !== undefined) {
    const address = comparable(email.trim());
    const at = address.lastIndexOf('@');
    const local = at > 0 ? address.slice(0, at) : address;
    if (comparable(password) === address || comparable(password) === local) return 'the password must not be the e-mail address or its local part';
  }
  return null;
}

export async function hashPassword(password: string, params: ScryptParams = OWASP_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  const actual = await derive(password.slice(0, MAX_PASSWORD_LENGTH + 1), Buffer.from(parts[4], 'base64url'), { N, r, p });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Hashing refused because the queue is full (answered 429 PASSWORD_HASHING_BUSY with Retry-After). */
export class PasswordHashingBusy extends Error {
  override readonly name = 'PasswordHashingBusy';
  constructor(readonly retryAfterSeconds: number) {
    super('every password hashing slot is busy and the queue is full');
  }
}

/** The hashing itself: scrypt by default; tests put an instrumented one behind the queue. */
export interface PasswordWork {
  hash(password: string): Promise<string>;
  verify(password: string, stored: string): Promise<boolean>;
}

export const SCRYPT_WORK: PasswordWork = { hash: (password) => hashPassword(password), verify: verifyPassword };

export interface PasswordQueueOptions {
  /** Hashes running at once (each holds 128 MiB and a libuv pool thread). */
  concurrency: number;
  /** Hashes waiting for a slot; beyond it, refused at once. */
  queueLength: number;
  /** What a refusal tells the client to wait, in seconds. */
  retryAfterSeconds: number;
}

/**
 * Two of libuv's four default threads at most, so DNS lookups of the image fetcher and file
 * work always find one free, and 256 MiB of scrypt memory at most. A short queue: a wait of
 * a few checks, not an unbounded pile-up.
 */
export const DEFAULT_PASSWORD_QUEUE: PasswordQueueOptions = { concurrency: 2, queueLength: 8, retryAfterSeconds: 1 };

/**
 * Every password hash and check of the service behind a bounded queue: at most
 * `concurrency` at once, at most `queueLength` waiting, and PasswordHashingBusy at once when
 * both are full, so scrypt cannot fill libuv's pool or memory, however many requests come.
 */
export class PasswordHasher {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private dummy: Promise<string> | undefined;
  private readonly options: PasswordQueueOptions;

  constructor(
    options: Partial<PasswordQueueOptions> = {},
    private readonly work: PasswordWork = SCRYPT_WORK,
  ) {
    this.options = { ...DEFAULT_PASSWORD_QUEUE, ...options };
    const { concurrency, queueLength } = this.options;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer (got ${concurrency})`);
    if (!Number.isInteger(queueLength) || queueLength < 0) throw new RangeError(`queueLength must be a non-negative integer (got ${queueLength})`);
  }

  stats(): { active: number; queued: number } {
    return { active: this.active, queued: this.waiting.length };
  }

  hash(password: string): Promise<string> {
    return this.run(() => this.work.hash(password));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.run(() => this.work.verify(password, stored));
  }

  /** Spends the work of a real check (for an unknown e-mail, so it answers as slowly as a known one). */
  burn(password: string): Promise<void> {
    return this.run(async () => {
      this.dummy ??= this.work.hash('not-a-real-password-for-timing');
      this.dummy.catch(() => (this.dummy = undefined));
      await this.work.verify(password, await this.dummy);
    });
  }

  private async run<T>(job: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await job();
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.active < this.options.concurrency && this.waiting.length === 0) {
      this.active++;
      return;
    }
    if (this.waiting.length >= this.options.queueLength) throw new PasswordHashingBusy(this.options.retryAfterSeconds);
    // release() hands its slot over: `active` already counts it.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
