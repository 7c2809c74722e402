/**
 * The second factor in a real browser (chromium, playwright-core): set up TOTP on the Account
 * page with a code computed from the secret the page shows, recovery codes shown once, the
 * owner requires it for the organisation, a stale check asks for a code before a key is
 * created, and the next sign-in has its second step.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/console/totp.js';
import { chromiumMissing, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/console.js';

const missing = chromiumMissing();
let served: ConsoleInBrowser | undefined;
let page: Page;
const pageErrors: string[] = [];

before(async () => {
  if (missing) return;
  served = await startConsoleInBrowser({ owner: 'mfa@acme.example', balance: 100 });
  page = await (await served.browser.newContext()).newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
});
after(async () => {
  await served?.close();
});

async function signInWithPassword(): Promise<void> {
  await page.goto(`${served!.base}/console/#/login`);
  await page.waitForSelector('form.login');
  await page.fill('input[name=email]', 'mfa@acme.example');
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
}

test('set up TOTP, require it, confirm before creating a key, sign in with the second step', { skip: missing }, async () => {
  const { t, base } = served!;
  await signInWithPassword();
  await page.waitForSelector('#app[data-page=keys]');

  // set up on the Account page
  await page.goto(`${base}/console/#/account`);
  await page.fill('#two-factor input[name=password]', PASSWORD);
  await page.click('#mfa-start');
  await page.waitForSelector('#totp-secret');
  const secret = (await page.textContent('#totp-secret'))!.replace(/\s/g, '');
  assert.match((await page.getAttribute('#otpauth-uri', 'href')) ?? '', /^otpauth:\/\/totp\//);
  await page.fill('#two-factor input[name=code]', totpCode(secret, Date.now()));
  await page.click('#two-factor button[type=submit]');
  await page.waitForSelector('#recovery-codes');
  const recovery = (await page.$$eval('#recovery-codes code', (els) => els.map((e) => e.textContent ?? ''))).map((c) => c.trim());
  assert.equal(recovery.length, 10);
  await page.click('#two-factor button:has-text("I saved them")');
  await page.waitForSelector('#two-factor .badge.active');
  assert.ok(!(await page.content()).includes(recovery[0]), 'recovery codes are shown once');

  // the owner requires it for the organisation
  await page.goto(`${base}/console/#/o/acme/settings`);
  await page.waitForSelector('#mfa-requirement input[name=mfa_required]');
  await page.check('#mfa-requirement input[name=mfa_required]');
  await page.waitForSelector('#mfa-requirement .alert.ok');
  assert.equal((await t.db('organizations').where({ name: 'acme' }).first<{ mfa_required: boolean }>('mfa_required'))?.mfa_required, true);

  // a check older than 10 minutes: creating a key asks for a code first
  await t.db('console_sessions').whereNotNull('mfa_verified_at').update({ mfa_verified_at: t.db.raw(`now() - interval '11 minutes'`) });
  await page.goto(`${base}/console/#/o/acme/keys`);
  await page.click('#create-key');
  await page.fill('input[name=name]', 'checked');
  await page.fill('input[name=classes]', '*');
  await page.click('form.form button[type=submit]');
  await page.waitForSelector('#mfa-recheck input[name=code]');
  await page.fill('#mfa-recheck input[name=code]', recovery[0]);
  await page.click('#mfa-recheck button[type=submit]');
  await page.waitForSelector('#secret-value');
  assert.match((await page.textContent('#secret-value'))!.trim(), /^cvk_/);

  // sign out; the next sign-in has a second step
  await page.click('#logout');
  await signInWithPassword();
  await page.waitForSelector('#mfa-step');
  await page.fill('#mfa-step input[name=code]', 'aaaaaaaa-aaaaaaaa');
  await page.click('#mfa-step button[type=submit]');
  await page.waitForSelector('#mfa-step .alert.error');
  assert.match((await page.textContent('#mfa-step .alert.error')) ?? '', /INVALID_MFA_CODE/);
  await page.fill('#mfa-step input[name=code]', recovery[1]);
  await page.click('#mfa-step button[type=submit]');
  await page.waitForSelector('#app[data-page=keys]');
  assert.deepEqual(pageErrors, []);
});
