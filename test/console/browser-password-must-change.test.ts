/**
 * A temporary password in a real browser (chromium, playwright-core): the owner created by
 * `recog users create` signs in, sees only "Choose your new password", chooses one, and the
 * console continues to the keys page.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { findUserByEmail } from '../../src/store/users.js';
import { chromiumMissing, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/console.js';

const missing = chromiumMissing();
const EMAIL = 'temporary@acme.example';
let served: ConsoleInBrowser | undefined;
let page: Page;
const pageErrors: string[] = [];

before(async () => {
  if (missing) return;
  served = await startConsoleInBrowser({ owner: EMAIL, balance: 100, temporaryPassword: true });
  page = await (await served.browser.newContext()).newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
});
after(async () => {
  await served?.close();
});

test('a first sign-in with an operator-set password shows only the new-password page, then continues', { skip: missing }, async () => {
  const { t, base } = served!;
  await page.goto(`${base}/console/#/login`);
  await page.waitForSelector('form.login');
  await page.fill('input[name=email]', EMAIL);
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('#app[data-page=new-password]');
  assert.equal(await page.$('#create-key'), null, 'nothing of the console but the new-password page');

  // Any other page still shows only the new-password form.
  await page.goto(`${base}/console/#/o/acme/keys`);
  await page.waitForSelector('#new-password');

  await page.fill('#new-password input[name=current]', PASSWORD);
  await page.fill('#new-password input[name=new]', 'my own browser passphrase');
  await page.fill('#new-password input[name=repeat]', 'my own browser passphrase');
  await page.click('#new-password button[type=submit]');
  await page.waitForSelector('#app[data-page=keys]');
  assert.equal((await findUserByEmail(t.db, EMAIL))!.password_must_change, false);
  assert.deepEqual(pageErrors, []);
});
