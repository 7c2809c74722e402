/**
 * Signed, expiring image URLs: `${publicBaseUrl}/v1/cv/images/${id}?expires=<unix s>&signature=<b64url>`
 * where signature = HMAC-SHA256(secret, `${id}.${expires}`). Verification is constant-time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ImageUrlSigner } from './types.js';

/** Below this a secret is guessable; loadOrCreateSecret makes 43 characters (32 random bytes). */
export const MIN_SECRET_LENGTH = 16;
export const SECRET_FILE_NAME = 'image-url-secret';

export interface HmacImageUrlSignerOptions {
  secret: string;
  /** e.g. https://cv.example.com (a trailing slash is ignored). */
  publicBaseUrl: string;
  ttlSeconds: number;
}

export class HmacImageUrlSigner implements ImageUrlSigner {
  private readonly secret: string;
  private readonly baseUrl: string;
  private readonly ttlSeconds: number;

  constructor(opts: HmacImageUrlSignerOptions) {
    if (typeof opts.secret !== 'string' || opts.secret.length < MIN_SECRET_LENGTH) {
      throw new Error(`the image URL secret (IMAGE_URL_SECRET) must be at least ${MIN_SECRET_LENGTH} characters`);
    }
    if (!Number.isInteger(opts.ttlSeconds) || opts.ttlSeconds < 1) throw new Error('ttlSeconds must be a positive integer');
    this.secret = opts.secret;
    this.baseUrl = opts.publicBaseUrl.replace(/\/+$/, '');
    this.ttlSeconds = opts.ttlSeconds;
  }

  private mac(requestId: string, expires: string): Buffer {
    // The "." cannot occur in either part, so no two (id, expires) pairs share a message.
    return createHmac('sha256', this.secret).update(`${requestId}.${expires}`).digest();
  }

  sign(requestId: string, now: Date = new Date()): string {
    const expires = String(Math.floor(now.getTime() / 1000) + this.ttlSeconds);
    const signature = this.mac(requestId, expires).toString('base64url');
    return `${this.baseUrl}/v1/cv/images/${encodeURIComponent(requestId)}?expires=${expires}&signature=${signature}`;
  }

  /**
   * Whether a link may be served, and if not why. 'expired' only for a link we did sign (so a stale bookmark is told apart from a link signed
   * with another replica's secret, which is 'invalid').
   */
  check(requestId: string, expires: string | undefined, signature: string | undefined, now: Date = new Date()): 'valid' | 'expired' | 'invalid' {
    if (typeof requestId !== 'string' || requestId.includes('.')) return 'invalid';
    if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires)) return 'invalid';
    if (typeof signature !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return 'invalid';
    const expected = this.mac(requestId, expires);
    const given = Buffer.from(signature, 'base64url');
    const authentic = given.length === expected.length && timingSafeEqual(given, expected);
    if (!authentic) return 'invalid';
    return Number(expires) >= Math.floor(now.getTime() / 1000) ? 'valid' : 'expired';
  }
}

/**
 * The signing secret kept at <dataDir>/image-url-secret (mode 0600): created once with 32 random
 * bytes, then reused, so signed URLs survive restarts. Safe when several processes start at once:
 * the file is published with link(), which fails if another process won.
 */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, SECRET_FILE_NAME);
  const existing = await readSecret(file);
  if (existing !== null) return existing;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const temp = path.join(dataDir, `.${SECRET_FILE_NAME}.${randomBytes(6).toString('hex')}.tmp`);
  await writeFile(temp, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(temp, { force: true });
  }
  const created = await readSecret(file);
  if (created === null) throw new Error(`could not create the image URL secret at ${file}`);
  return created;
}

async function readSecret(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const secret = text.trim();
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new Error(`${file} holds no usable secret (under ${MIN_SECRET_LENGTH} characters); delete it to generate a new one`);
  }
  return secret;
}
