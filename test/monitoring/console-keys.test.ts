// The load runner signs in to the console with a TOTP code it computes itself
// (load-tests/tools/console-keys.mjs, plain JavaScript without the service's modules): its
// codes must be the ones the service accepts, for any secret and any moment.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { test } from 'node:test';
import { base32Encode, newTotpSecret, totpCode } from '../../src/console/totp.js';
// @ts-expect-error: a plain .mjs tool without type declarations
import { totp } from '../../load-tests/tools/console-keys.mjs';

const toolTotp = totp as (secret: string, now?: number) => string;

test('RFC 6238 test vector (SHA-1, T = 59 s): the last six digits of 94287082', () => {
  const secret = base32Encode(Buffer.from('12345678901234567890'));
  assert.equal(toolTotp(secret, 59_000), '287082');
  assert.equal(totpCode(secret, 59_000), '287082');
});

test("the tool's codes are the service's for random secrets and times", () => {
  for (let i = 0; i < 200; i++) {
    const secret = i % 2 === 0 ? newTotpSecret() : base32Encode(randomBytes(randomInt(10, 33)));
    const now = randomInt(0, 2 ** 40);
    assert.equal(toolTotp(secret, now), totpCode(secret, now), `secret ${secret} at ${now}`);
  }
});

test('a secret that is not base32 is refused, not turned into a wrong code', () => {
  assert.throws(() => toolTotp('not base32!'), /not base32/);
});
