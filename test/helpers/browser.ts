/**
 * The console's web app in a real browser (Debian's chromium, driven by playwright-core,
 * which never downloads one): the bundle built into a temp dir, a test app serving it on
 * loopback, an organisation with one owner, and a headless chromium. Under CI=true a
 * missing chromium fails the file rather than skipping it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { usersCreate } from '../../src/cli/commands/users.js';
import { createOrg } from '../../src/store/orgs.js';
import { buildTestApp, type TestApp } from './app.js';
import { PASSWORD } from './console.js';
import { REPO_ROOT } from './fixtures.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests are skipped (chromium missing), or false; throws under CI=true. */
export function chromiumMissing(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
  return `${CHROMIUM} not found: apt-get install chromium`;
}

export interface ConsoleInBrowser {
  t: TestApp;
  browser: Browser;
  /** Where the page is served, e.g. http://127.0.0.1:PORT. */
  base: string;
  close(): Promise<void>;
}

export async function startConsoleInBrowser(o: {
  /** The owner's e-mail; the organisation is "acme" with `balance` units. */
  owner: string;
  balance: number;
  /** Settings for the app (PUBLIC_BASE_URL, …). */
  env?: Record<string, string>;
  /** The host name the page is opened at (default 127.0.0.1). */
  host?: string;
  /** Keep the owner's password temporary, as `recog users create` leaves it (default: already changed). */
  temporaryPassword?: boolean;
}): Promise<ConsoleInBrowser> {
  const assetsDir = await mkdtemp(path.join(os.tmpdir(), 'recog-console-web-'));
  let t: TestApp | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await t?.close();
    await rm(assetsDir, { recursive: true, force: true });
  };
  try {
    execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-console.mjs'), assetsDir], { stdio: 'ignore' });
    t = await buildTestApp(o.env ?? {}, { console: { assetsDir } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://${o.host ?? '127.0.0.1'}:${(t.app.server.address() as AddressInfo).port}`;
    const org = await createOrg(t.db, { name: 'acme', balance: o.balance });
    const owner = await usersCreate(t.db, { email: o.owner, org: org.name, role: 'owner' }, async () => PASSWORD);
    // As if the owner had already replaced the operator's temporary password with their own
    // (that first sign-in is test/console/browser-password-must-change.test.ts).
    if (!o.temporaryPassword) await t.db('users').where({ id: owner.user.id }).update({ password_must_change: false });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    return { t, browser, base, close };
  } catch (err) {
    await close();
    throw err;
  }
}
