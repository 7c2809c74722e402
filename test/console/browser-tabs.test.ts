/**
 * Two tabs of the web app refreshing at the same moment (issue 29), in a real browser
 * (Debian's chromium, as in browser.test.ts): both tabs find their access cookie expired
 * and refresh at once. The page takes a Web Lock for the refresh, so the tabs refresh one
 * after the other, each with the refresh cookie the jar holds then (never the same token
 * twice: the server's grace is not needed), and both stay signed in.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { PASSWORD } from '../helpers/console.js';
import type { TestApp } from '../helpers/app.js';
import { chromiumMissing, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

const missing = chromiumMissing();

let t: TestApp;
let base: string;
let served: ConsoleInBrowser | undefined;

before(async () => {
  if (missing) return;
  served = await startConsoleInBrowser({ owner: 'tabs@acme.example', balance: 100 });
  ({ t, base } = served);
});
after(async () => {
  await served?.close();
});

/** The refresh cookie each refresh request of the page carried (each read is awaited before use). */
function refreshCookiesSent(page: Page): Array<Promise<string>> {
  const sent: Array<Promise<string>> = [];
  page.on('request', (request) => {
    if (!request.url().endsWith('/auth/refresh')) return;
    sent.push(request.allHeaders().then((h) => /(?:^|;\s*)rc_refresh=([^;]+)/.exec(h.cookie ?? '')?.[1] ?? '(none)'));
  });
  return sent;
}

test('two tabs refreshing at the same moment both stay signed in, one refresh at a time', { skip: missing }, async () => {
  const context = await served!.browser.newContext();
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
  const presented = await Promise.all(sent.flat());
  // Each round needs at least one refresh; whether the other tab needs its own depends on
  // whether its request left before the first refresh set the new access cookie (timing).
  assert.ok(presented.length >= 3, `a refresh in each round (${presented.length})`);
  assert.equal(new Set(presented).size, presented.length, 'no refresh token was presented twice: the tabs took turns');
  const sessions = await t.db('console_sessions').select('revoked_at', 'revoked_reason');
  assert.deepEqual(sessions.map((s) => s.revoked_reason), [null], 'one session, never revoked');
  await context.close();
});
