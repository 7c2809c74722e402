/**
 * End to end in a real browser: Debian's chromium driven by playwright-core (never its own
 * browser download) against a real service on 127.0.0.1 (real PostgreSQL, the embedded
 * ONNX model). Signs in, creates a key and sees it once, calls the API with it, sees usage
 * and the request with its boxes, suspends it (API 403), revokes it after typing its name,
 * signs out. Screenshots of each page: docs/console/ with UPDATE_SCREENSHOTS=1.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import type { TestApp } from '../helpers/app.js';
import { chromiumMissing, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { eventually } from '../helpers/eventually.js';
import { PASSWORD } from '../helpers/console.js';

// Screenshots go to docs/console (shown in docs/console.md) with UPDATE_SCREENSHOTS=1, else
// to a temporary folder, so a plain test run leaves the work tree as it was.
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(REPO_ROOT, 'docs/console') : path.join(os.tmpdir(), 'recog-console-screenshots');
const missing = chromiumMissing();

let t: TestApp;
let browser: Browser;
let page: Page;
let base: string;
let served: ConsoleInBrowser | undefined;
const pageErrors: string[] = [];

before(async () => {
  if (missing) return;
  served = await startConsoleInBrowser({ owner: 'ada@acme.example', balance: 5000 });
  ({ t, browser, base } = served);
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 401/.test(m.text())) pageErrors.push(m.text());
  });
  await mkdir(SHOTS, { recursive: true });
});
after(async () => {
  await served?.close();
});

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const sync = (key: string, externalId: string) =>
  fetch(`${base}/v1/cv/requests/sync`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ external_id: externalId, image_base64: readFixture('basketball1.png').toString('base64') }),
  });

test('sign in, create a key, use it, watch it, suspend, revoke, sign out', { skip: missing }, async () => {
  const res = await fetch(`${base}/console/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');

  // sign in
  await page.goto(`${base}/console/`);
  await page.waitForSelector('form.login');
  await shot('login');
  await page.fill('input[name=email]', 'ada@acme.example');
  await page.fill('input[name=password]', 'a wrong password');
  await page.click('button[type=submit]');
  await page.waitForSelector('.alert.error');
  assert.match(await page.textContent('.alert.error') ?? '', /INVALID_CREDENTIALS/);
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('#app[data-page=keys]');
  const cookies = await page.context().cookies();
  assert.equal(cookies.find((c) => c.name === 'rc_access')?.httpOnly, true);

  // create a key: its secret is shown once
  await page.click('#create-key');
  await page.fill('input[name=name]', 'web-shop');
  await page.fill('input[name=description]', 'the online shop');
  await page.fill('input[name=classes]', '*');
  await page.fill('input[name=monthly_quota]', '1000');
  await page.fill('input[name=rate_limit_per_minute]', '1');
  await page.click('form.form button[type=submit]');
  await page.waitForSelector('#secret-value');
  const secret = (await page.textContent('#secret-value'))!.trim();
  assert.match(secret, /^cvk_/);
  await shot('key-created');
  await page.click('#new-secret button:has-text("Done")');
  await page.waitForSelector('tr[data-key="web-shop"]');
  assert.ok(!(await page.content()).includes(secret), 'the secret is never shown again');

  // use it
  const done = await sync(secret, 'shelf-1');
  assert.equal(done.status, 200, await done.clone().text());
  const { request_id: requestId, results } = (await done.json()) as { request_id: string; results: unknown[] };
  const refused = await sync(secret, 'shelf-1b'); // over the key's 1 per minute
  assert.equal(refused.status, 429);
  // The refusal is counted for the usage chart in an onResponse hook, after the 429 went out
  // (src/console/refusals.ts): wait until it is there before the page asserts "Refused 1".
  const counted = await eventually(async () => {
    const [{ n }] = await t.db('key_refusals_daily as r').join('requests as q', 'q.key_id', 'r.key_id').where('q.id', requestId).sum<{ n: string | null }[]>('r.refused as n');
    return Number(n ?? 0) === 1;
  }, { what: 'the refused call counted once in key_refusals_daily' });
  assert.ok(counted, 'the refused call is counted once in key_refusals_daily');
  assert.ok(results.length > 0);
  const rated = await fetch(`${base}/v1/cv/feedback`, { method: 'POST', headers: { 'x-api-key': secret, 'content-type': 'application/json' }, body: JSON.stringify({ request_id: requestId, rating: 1 }) });
  assert.equal(rated.status, 200);

  await page.reload();
  await page.waitForSelector('tr[data-key="web-shop"]');
  await shot('keys');

  // the key's page: usage and the request with its boxes drawn over the image
  await page.click('tr[data-key="web-shop"] a');
  await page.waitForSelector(`[data-request="${requestId}"] svg.boxes[data-boxes]`);
  const drawn = Number(await page.getAttribute(`[data-request="${requestId}"] svg.boxes`, 'data-boxes'));
  assert.equal(drawn, results.length);
  assert.equal(await page.locator(`[data-request="${requestId}"] svg.boxes rect.box`).count(), results.length);
  assert.ok((await page.$eval('.frame img', (img) => (img as unknown as { naturalWidth: number }).naturalWidth)) > 0, 'the signed image loaded');
  assert.match((await page.textContent('.totals')) ?? '', /Done 1 · Error 0 · Refused 1/);
  assert.match((await page.textContent(`[data-request="${requestId}"] .feedback`)) ?? '', /good/);
  await shot('key-requests');

  for (const tab of ['usage', 'feedback', 'members', 'audit', 'settings']) {
    await page.click(`nav a[href$="/${tab}"]`);
    await page.waitForSelector(`#app[data-page=${tab}]`);
    if (tab === 'members') {
      // inviting: no password is chosen for anyone; a one-time link is shown once
      await page.fill('input[name=email][placeholder]', 'bob@acme.example');
      await page.selectOption('select[name=role]', 'viewer');
      await page.click('form button:has-text("Invite")');
      await page.waitForSelector('#invitation-url');
      const link = (await page.textContent('#invitation-url'))!.trim();
      const token = /#\/invite\/(rci_[\w-]+)$/.exec(link)?.[1];
      assert.ok(token, link);
      assert.equal(await page.locator('#invitations tr[data-invitation="bob@acme.example"]').count(), 1, 'listed as pending');
      // the invitee, in a browser of their own, opens the link and sets their own password
      const invitee = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
      invitee.on('pageerror', (e) => pageErrors.push(e.message));
      await invitee.goto(`${base}/console/#/invite/${token}`);
      await invitee.waitForSelector('#invite input[name=new_password]');
      assert.match((await invitee.textContent('#invite')) ?? '', /ada@acme\.example invites bob@acme\.example to acme as viewer/);
      await invitee.screenshot({ path: path.join(SHOTS, 'invite.png'), fullPage: true });
      await invitee.fill('#invite input[name=new_password]', 'bob chose this passphrase');
      await invitee.fill('#invite input[name=repeat]', 'bob chose this passphrase');
      await invitee.click('#invite button[type=submit]');
      await invitee.waitForSelector('#app[data-page=keys]');
      assert.match((await invitee.textContent('header')) ?? '', /bob@acme\.example/);
      await invitee.context().close();
      // the link is spent
      const again = await fetch(`${base}/console/api/v1/invitations/inspect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      assert.equal(again.status, 404);
    }
    await shot(tab);
  }
  assert.match((await page.textContent('dl.facts')) ?? '', /5,000|4,999/);
  await page.click('header a[href="#/account"]');
  await page.waitForSelector('#app[data-page=account]');
  await shot('account');
  // a password change: every other session ends (an API sign-in here), this browser goes on in a new session
  const other = (await (await fetch(`${base}/console/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ada@acme.example', password: PASSWORD }) })).json()) as { access_token: string };
  await page.fill('input[name=current]', PASSWORD);
  await page.fill('input[name=new]', 'ada changed her passphrase');
  await page.click('form.form button[type=submit]');
  await page.waitForSelector('#password-changed');
  assert.equal((await fetch(`${base}/console/api/v1/me`, { headers: { authorization: `Bearer ${other.access_token}` } })).status, 401, 'the other session ended');

  // edit
  await page.click('nav a[href$="/keys"]');
  await page.click('tr[data-key="web-shop"] button:has-text("Edit")');
  await page.fill('input[name=description]', 'the online shop, EU');
  await page.fill('input[name=classes]', 'person, sports ball');
  await page.click('form.form button[type=submit]');
  await page.waitForSelector('tr[data-key="web-shop"] td:has-text("person, sports ball")');
  assert.match((await page.textContent('tr[data-key="web-shop"]')) ?? '', /the online shop, EU/);

  // suspend: the API answers 403
  await page.click('tr[data-key="web-shop"] button:has-text("Suspend")');
  await page.waitForSelector('tr[data-key="web-shop"] .badge.suspended');
  const suspended = await sync(secret, 'shelf-2');
  assert.equal(suspended.status, 403);
  assert.equal(((await suspended.json()) as { error_code: string }).error_code, 'KEY_SUSPENDED');

  // rotate: the successor is created (its secret shown once), then the old key revoked
  await page.click('tr[data-key="web-shop"] button:has-text("Rotate")');
  await page.waitForSelector('#secret-value');
  const successor = (await page.textContent('#secret-value'))!.trim();
  assert.notEqual(successor, secret);
  assert.equal(await page.locator('tr[data-key^="web-shop (rotated"] .badge.active').count(), 1);
  await shot('key-rotated');
  const works = await sync(successor, 'shelf-new');
  assert.equal(works.status, 200, await works.clone().text());

  // revoke: only after typing the key's name
  await page.click('#new-secret button:has-text("Revoke")');
  await page.waitForSelector('#revoke-form');
  await page.fill('#revoke-form input[name=confirm]', 'web-sho');
  assert.equal(await page.isDisabled('#revoke-form button.danger'), true);
  await page.fill('#revoke-form input[name=confirm]', 'web-shop');
  await shot('revoke-confirm');
  await page.click('#revoke-form button.danger');
  await page.waitForSelector('tr[data-key="web-shop"] .badge.revoked');
  const revoked = await sync(secret, 'shelf-3');
  assert.equal(((await revoked.json()) as { error_code: string }).error_code, 'KEY_REVOKED');

  await page.click('nav a[href$="/audit"]');
  await page.waitForSelector('#app[data-page=audit]');
  const audit = (await page.textContent('table.audit')) ?? '';
  for (const action of ['key.create', 'key.suspend', 'key.revoke']) assert.ok(audit.includes(action), action);
  await shot('audit');

  // the filters: one action; then the same filter exported as JSON lines
  await page.fill('#audit-filters input[name=action]', 'key.revoke');
  await page.click('#audit-filters button[type=submit]');
  await page.waitForSelector('#audit-filters input[name=action][value="key.revoke"]');
  const shown = await page.$$eval('table.audit tbody td:nth-child(3)', (tds) => tds.map((td) => td.textContent));
  assert.ok(shown.length > 0 && shown.every((a) => a === 'key.revoke'), shown.join());
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#audit-export')]);
  const exported = (await readFile(await download.path(), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { action: string });
  assert.ok(exported.length === shown.length && exported.every((e) => e.action === 'key.revoke'), JSON.stringify(exported));

  // an expired access cookie is refreshed silently (the refresh token rotates)
  const before = (await page.context().cookies()).find((c) => c.name === 'rc_refresh')!.value;
  await page.context().clearCookies({ name: 'rc_access' });
  await page.click('nav a[href$="/settings"]');
  await page.waitForSelector('#app[data-page=settings]');
  const after = await page.context().cookies();
  assert.ok(after.some((c) => c.name === 'rc_access'), 'a new access cookie');
  assert.notEqual(after.find((c) => c.name === 'rc_refresh')?.value, before, 'the refresh token rotated');

  // sign out: the session is gone
  await page.click('#logout');
  await page.waitForSelector('form.login');
  const me = await page.evaluate(async () => (await fetch('/console/api/v1/me')).status);
  assert.equal(me, 401);
  const live = await t.db('console_sessions as s').join('users as u', 'u.id', 's.user_id').where('u.email', 'ada@acme.example').whereNull('s.revoked_at').count<{ count: string }[]>('* as count');
  assert.equal(Number(live[0].count), 0);

  assert.deepEqual(pageErrors, [], 'no script errors or CSP violations in the page');
});
