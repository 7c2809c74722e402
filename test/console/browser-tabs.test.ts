/**
 * Two tabs of the web app refreshing at the same moment (issue 29), in a real browser
 * (Debian's chromium, as in browser.test.ts): both tabs find their access cookie expired
 * and refresh at once. The page takes a Web Lock for the refresh, so the tabs refresh one
 * after the other, each with the refresh cookie the jar holds then (never the same token
 * twice: the server's grace is not needed), and both stay signed in.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
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
  t = await buildTestApp({}, { console: { assetsDir } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const org = await createOrg(t.db, { name: 'acme', balance: 100 });
  await usersCreate(t.db, { email: 'tabs@acme.example', org: org.name, role: 'owner' }, async () => PASSWORD);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  if (assetsDir) await rm(assetsDir, { recursive: true, force: true });
});

/** The refresh cookie each refresh request of the page carried. */
function refreshCookiesSent(page: Page): string[] {
  const sent: string[] = [];
  page.on('request', (request) => {
    if (!request.url().endsWith('/auth/refresh')) return;
    void request.allHeaders().then((h) => sent.push(/(?:^|;\s*)rc_refresh=([^;]+)/.exec(h.cookie ?? '')?.[1] ?? '(none)'));
  });
  return sent;
}

test('two tabs refreshing at the same moment both stay signed in, one refresh at a time', { skip: missing && `${CHROMIUM} not found: apt-get install chromium` }, async () => {
  const context = await browser.newContext();
  const first = await context.newPage();
  await first.goto(`${base}/console/`);
  await first.waitForSelector('form.login');
  await first.fill('input[name=email]', 'tabs@acme.example');
  await first.fill('input[name=password]', PASSWORD);
  await first.click('button[type=submit]');
  await first.waitForSelector('#app[data-page=keys]');
  const second = await context.newPage();
  await second.goto(`${base}/console/`);
  await second.waitForSelector('#app[data-page=keys]');
  assert.equal(await second.evaluate(() => typeof navigator.locks?.request), 'function', 'Web Locks on a loopback origin');

  const sent = [...[first, second].map(refreshCookiesSent)];
  for (let round = 0; round < 3; round++) {
    // both tabs find the access cookie gone and refresh at once
    await context.clearCookies({ name: 'rc_access' });
    await Promise.all([first.reload(), second.reload()]);
    await Promise.all([first.waitForSelector('#app[data-page=keys]'), second.waitForSelector('#app[data-page=keys]')]);
  }
  const presented = sent.flat();
  assert.ok(presented.length >= 6, `each tab refreshed in each round (${presented.length})`);
  assert.equal(new Set(presented).size, presented.length, 'no refresh token was presented twice: the tabs took turns');
  const sessions = await t.db('console_sessions').select('revoked_at', 'revoked_reason');
  assert.deepEqual(sessions.map((s) => s.revoked_reason), [null], 'one session, never revoked');
  await context.close();
});
