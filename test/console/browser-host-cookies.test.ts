/**
 * The web app with `__Host-` cookies, in a real browser (Debian's chromium, as in
 * browser.test.ts): a service published over https (PUBLIC_BASE_URL) sets Secure `__Host-`
 * cookies, which chromium also accepts from http://localhost (a potentially trustworthy
 * origin), so the page can be driven without TLS. Signs in, creates a key (a POST whose
 * x-csrf-token the page reads from `__Host-rc_csrf`), and refreshes an expired access
 * cookie silently.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { usersCreate } from '../../src/cli/commands/users.js';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/console.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing && process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);

let t: TestApp;
let browser: Browser;
let base: string;
let assetsDir: string;

before(async () => {
  if (missing) return;
  assetsDir = await mkdtemp(path.join(os.tmpdir(), 'recog-console-web-'));
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-console.mjs'), assetsDir], { stdio: 'ignore' });
  t = await buildTestApp({ PUBLIC_BASE_URL: 'https://cv.example' }, { console: { assetsDir } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://localhost:${(t.app.server.address() as AddressInfo).port}`;
  const org = await createOrg(t.db, { name: 'acme', balance: 100 });
  await usersCreate(t.db, { email: 'ada@acme.example', org: org.name, role: 'owner' }, async () => PASSWORD);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  if (assetsDir) await rm(assetsDir, { recursive: true, force: true });
});

test('published over https: __Host- cookies, the double submit and the silent refresh work in the page', { skip: missing && `${CHROMIUM} not found: apt-get install chromium` }, async () => {
  const page = await (await browser.newContext()).newPage();
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
