/** RFC 6238 TOTP: the SHA-1 test vectors of the RFC's appendix B, the window, base32 and the otpauth URI. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base32Decode, base32Encode, hotp, matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, otpauthUri, totpCode, totpStep } from '../../src/console/totp.js';

// RFC 6238 appendix B: the SHA-1 seed is the ASCII string "12345678901234567890", 8 digits.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890', 'ascii'));
const RFC_VECTORS: Array<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

test('the SHA-1 test vectors of RFC 6238', () => {
  assert.equal(RFC_SECRET, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  for (const [seconds, code] of RFC_VECTORS) assert.equal(totpCode(RFC_SECRET, seconds * 1000, 8), code, `T=${seconds}`);
  // 6 digits are the last six of the same value (RFC 4226 truncation modulo 10^6)
  for (const [seconds, code] of RFC_VECTORS) assert.equal(totpCode(RFC_SECRET, seconds * 1000), code.slice(2), `T=${seconds}`);
});

test('RFC 4226 appendix D HOTP values', () => {
  const key = Buffer.from('12345678901234567890', 'ascii');
  assert.deepEqual([0, 1, 2, 9].map((c) => hotp(key, c)), ['755224', '287082', '359152', '520489']);
});

test('a code is accepted one step either side, and never at or before the last accepted step', () => {
  const secret = newTotpSecret();
  assert.equal(base32Decode(secret).length, 20, '160-bit secret');
  const now = 1_800_000_000_000;
  const step = totpStep(now);
  assert.equal(matchTotp(secret, totpCode(secret, now), now, null), step);
  assert.equal(matchTotp(secret, totpCode(secret, now - 30_000), now, null), step - 1);
  assert.equal(matchTotp(secret, totpCode(secret, now + 30_000), now, null), step + 1);
  assert.equal(matchTotp(secret, totpCode(secret, now - 60_000), now, null), null, 'two steps old');
  assert.equal(matchTotp(secret, totpCode(secret, now + 60_000), now, null), null, 'two steps ahead');
  assert.equal(matchTotp(secret, totpCode(secret, now), now, step), null, 'already accepted');
  assert.equal(matchTotp(secret, totpCode(secret, now + 30_000), now, step), step + 1, 'the next one still works');
  assert.equal(matchTotp(secret, 'abcdef', now, null), null);
  assert.equal(matchTotp(secret, `${totpCode(secret, now).slice(0, 3)} ${totpCode(secret, now).slice(3)}`, now, null), step, 'spaces ignored');
});

test('otpauth URI and recovery codes', () => {
  const uri = new URL(otpauthUri('JBSWY3DPEHPK3PXP', 'ada@acme.example', 'Recognition console'));
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP');
  assert.equal(uri.searchParams.get('issuer'), 'Recognition console');
  assert.equal(uri.searchParams.get('period'), '30');
  const codes = newRecoveryCodes();
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const c of codes) assert.match(c, /^[a-z2-7]{8}-[a-z2-7]{8}$/);
  assert.equal(normalizeRecoveryCode(codes[0].toUpperCase().replace('-', ' ')), codes[0].replace('-', ''));
});
