/**
 * The web app with `__Host-` cookies, in a real browser (Debian's chromium, as in
 * browser.test.ts): a service published over https (PUBLIC_BASE_URL) sets Secure `__Host-`
 * cookies, which chromium also accepts from http://localhost (a potentially trustworthy
 * origin), so the page can be driven without TLS. Signs in, creates a key (a POST whose
 * x-csrf-token the page reads from `__Host-rc_csrf`), and refreshes an expired access
 * cookie silently.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PASSWORD } from '../helpers/console.js';
import { chromiumMissing, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

const missing = chromiumMissing();

let base: string;
let served: ConsoleInBrowser | undefined;

before(async () => {
  if (missing) return;
  served = await startConsoleInBrowser({ owner: 'ada@acme.example', balance: 100, env: { PUBLIC_BASE_URL: 'https://cv.example' }, host: 'localhost' });
  ({ base } = served);
});
after(async () => {
  await served?.close();
});

test('published over https: __Host- cookies, the double submit and the silent refresh work in the page', { skip: missing }, async () => {
  const page = await (await served!.browser.newContext()).newPage();
  await page.goto(`${base}/console/`);
  await page.waitForSelector('form.login');
  await page.fill('input[name=email]', 'ada@acme.example');
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('#app[data-page=keys]');
  const cookies = await page.context().cookies();
  assert.deepEqual(cookies.map((c) => c.name).sort(), ['__Host-rc_access', '__Host-rc_csrf', '__Host-rc_refresh']);
  for (const c of cookies) {
    assert.equal(c.secure, true, c.name);
    assert.equal(c.path, '/', c.name);
    assert.equal(c.sameSite, 'Strict', c.name);
  }
  assert.equal(cookies.find((c) => c.name === '__Host-rc_csrf')?.httpOnly, false);

  // an unsafe call: the page echoes __Host-rc_csrf in x-csrf-token
  await page.click('#create-key');
  await page.fill('input[name=name]', 'web-shop');
  await page.fill('input[name=classes]', '*');
  await page.click('form.form button[type=submit]');
  await page.waitForSelector('#secret-value');
  assert.match((await page.textContent('#secret-value'))!.trim(), /^cvk_/);

  // an expired access cookie is refreshed silently through __Host-rc_refresh
  const before = cookies.find((c) => c.name === '__Host-rc_refresh')!.value;
  await page.context().clearCookies({ name: '__Host-rc_access' });
  await page.reload();
  await page.waitForSelector('#app[data-page=keys]');
  const after = await page.context().cookies();
  assert.ok(after.some((c) => c.name === '__Host-rc_access'), 'a new access cookie');
  assert.notEqual(after.find((c) => c.name === '__Host-rc_refresh')?.value, before, 'the refresh token rotated');
});
