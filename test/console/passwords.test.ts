/**
 * The password policy of issue 29: length bounds, the bundled common-passwords list
 * (@zxcvbn-ts/language-common, MIT), and the account's own e-mail refused.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { isCommonPassword, MIN_PASSWORD_LENGTH, passwordProblem } from '../../src/console/passwords.js';

test('a common password long enough for the length rule is refused', () => {
  for (const pw of ['qwerty123456', '1qaz2wsx3edc', 'password1234', 'qwertyuiop123']) {
    assert.ok(pw.length >= MIN_PASSWORD_LENGTH, pw);
    assert.match(passwordProblem(pw) ?? '', /common passwords/, pw);
  }
});

test('the common-passwords check ignores case', () => {
  assert.equal(isCommonPassword('QWERTY123456'), true);
  assert.equal(isCommonPassword('Password1234'), true);
  assert.match(passwordProblem('QwErTy123456') ?? '', /common passwords/);
});

test('an uncommon passphrase passes', () => {
  assert.equal(isCommonPassword('a long enough passphrase'), false);
  assert.equal(passwordProblem('a long enough passphrase'), null);
  assert.equal(passwordProblem('a long enough passphrase', 'alice@example.com'), null);
});

test('the e-mail address and its local part are refused, ignoring case', () => {
  assert.match(passwordProblem('Alexandra.Smith', 'alexandra.smith@example.com') ?? '', /e-mail/);
  assert.match(passwordProblem('ALEXANDRA.SMITH@EXAMPLE.COM', 'alexandra.smith@example.com') ?? '', /e-mail/);
  // Without the e-mail, the same password is only measured and looked up.
  assert.equal(passwordProblem('Alexandra.Smith'), null);
});

test('length is checked before the list', () => {
  assert.match(passwordProblem('password') ?? '', /at least/);
  assert.match(passwordProblem('x'.repeat(1025)) ?? '', /at most/);
});
