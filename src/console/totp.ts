/**
 * TOTP (RFC 6238): HMAC-SHA1 over the 30-second step count, 6 digits, dynamic truncation of
 * RFC 4226. Pure functions of the secret and a time, so tests drive the clock. node:crypto
 * only (no library: the whole algorithm is these lines).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Codes of the previous and the next step are accepted too (clock drift, a code typed late). */
export const TOTP_WINDOW = 1;
/** 160-bit secrets, the length RFC 4226 recommends for HMAC-SHA1. */
export const TOTP_SECRET_BYTES = 20;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const i = BASE32.indexOf(c);
    if (i < 0) throw new Error('not base32');
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new random secret, base32 (what authenticator apps take). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(TOTP_SECRET_BYTES));
}

/** The step count of a time (milliseconds since the epoch). */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/** The code of one step (HOTP of the step count), `digits` long; `key` is the raw secret. */
export function hotp(key: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The code at time `nowMs` for a base32 secret. */
export function totpCode(secret: string, nowMs: number, digits = TOTP_DIGITS): string {
  return hotp(base32Decode(secret), totpStep(nowMs), digits);
}

/**
 * The step whose code `code` is, within ±TOTP_WINDOW steps of `nowMs` and after `lastStep`
 * (a code accepted once is never accepted again), or null.
 */
export function matchTotp(secret: string, code: string, nowMs: number, lastStep: number | null): number | null {
  const typed = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(typed)) return null;
  const key = base32Decode(secret);
  const now = totpStep(nowMs);
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    if (lastStep !== null && step <= lastStep) continue;
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(typed))) return step;
  }
  return null;
}

/** The otpauth:// URI authenticator apps read (Key Uri Format), for a QR code or a link. */
export function otpauthUri(secret: string, account: string, issuer: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const params = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${label}?${params.toString()}`;
}

/** Ten single-use recovery codes, 80 bits each, as `xxxxxxxx-xxxxxxxx` (base32, lower case). */
export function newRecoveryCodes(count = 10): string[] {
  return Array.from({ length: count }, () => {
    const c = base32Encode(randomBytes(10)).toLowerCase();
    return `${c.slice(0, 8)}-${c.slice(8)}`;
  });
}

/** A recovery code as typed (any case, spaces or dashes) in the form it is hashed in. */
export function normalizeRecoveryCode(typed: string): string {
  return typed.replace(/[\s-]/g, '').toLowerCase();
}
