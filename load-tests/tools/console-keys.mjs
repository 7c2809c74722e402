// Creates and revokes the load test's API keys through the console API, signed in as a
// console user the way the web console signs in (cookies + x-csrf-token double submit), so
// a run needs a console account and no access to the deployment's database.
//
//   node load-tests/tools/console-keys.mjs create <base URL> <spec.json> <out dir>
//   node load-tests/tools/console-keys.mjs revoke <base URL> <out dir>
//
// Environment: CONSOLE_EMAIL, CONSOLE_PASSWORD (the account's password);
//   CONSOLE_NEW_PASSWORD: the password to choose when the account's password is temporary
//     (set by an operator with `recog users create`; the console then allows nothing else);
//   CONSOLE_TOTP_SECRET: the base32 TOTP secret, for an account with two-factor
//     authentication (sign-in code, and the fresh check key creation asks for).
// spec.json: [{ "var": "API_KEY", "org": "<name or id>", "name": "k6-load", "quota": 100000000,
//   "rate_limit": 1000000, "count": 1 }, …]; count > 1 makes that many keys, joined with commas.
// create writes <out dir>/keys.env (VAR=secret lines, mode 600; the secrets go nowhere
// else) and <out dir>/keys.json (org and id of each key, for revoke). Exit code 1 on any
// refusal, with the console's error_code and message.
/* global fetch, AbortSignal */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout } from 'node:timers';
import { pathToFileURL } from 'node:url';

const API = '/console/api/v1';

/** The cookies a browser would keep for this origin, with their paths. */
class CookieJar {
  constructor() { this.cookies = new Map(); }

  take(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const pathAttr = attrs.map((a) => a.trim()).find((a) => /^path=/i.test(a));
      const maxAge = attrs.map((a) => a.trim()).find((a) => /^max-age=/i.test(a));
      // An emptied cookie (logout, rotation) is deleted, as a browser does.
      if (value === '' || (maxAge && Number(maxAge.slice(8)) <= 0)) this.cookies.delete(name);
      else this.cookies.set(name, { value, path: pathAttr ? pathAttr.slice(5) : '/' });
    }
  }

  header(urlPath) {
    return [...this.cookies].filter(([, c]) => urlPath.startsWith(c.path)).map(([n, c]) => `${n}=${c.value}`).join('; ');
  }

  /** The CSRF cookie's value (rc_csrf over http, __Host-rc_csrf over https). */
  csrf() {
    for (const [name, c] of this.cookies) if (name === 'rc_csrf' || name === '__Host-rc_csrf') return c.value;
    return undefined;
  }
}

class ConsoleError extends Error {
  constructor(what, status, body) {
    super(`${what}: ${status} ${body && body.error_code ? `${body.error_code} ${body.message}` : JSON.stringify(body)}`);
    this.status = status;
    this.code = body && body.error_code;
  }
}

/** RFC 6238 code (HMAC-SHA1, 30 s, 6 digits) of a base32 secret, as an authenticator app shows it. */
export function totp(secret, now = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/[\s=]/g, '').toUpperCase()) {
    const i = alphabet.indexOf(ch);
    if (i < 0) throw new Error('CONSOLE_TOTP_SECRET is not base32');
    bits += i.toString(2).padStart(5, '0');
  }
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(now / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const off = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(off) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

class ConsoleSession {
  constructor(baseUrl) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.jar = new CookieJar();
  }

  async call(method, route, body, { expect = [200] } = {}) {
    const urlPath = `${API}${route}`;
    const headers = { accept: 'application/json', 'x-console-session': 'cookie' };
    const cookie = this.jar.header(urlPath);
    if (cookie) headers.cookie = cookie;
    if (body !== undefined) headers['content-type'] = 'application/json';
    // The double submit: unsafe methods repeat the CSRF cookie in a header.
    if (method !== 'GET' && this.jar.csrf()) headers['x-csrf-token'] = this.jar.csrf();
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${this.base}${urlPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
      this.jar.take(res);
      const text = await res.text();
      const parsed = text ? JSON.parse(text) : null;
      if (expect.includes(res.status)) return parsed;
      // Password checks are bounded server-side; the answer says to retry shortly.
      if (res.status === 429 && parsed && parsed.error_code === 'PASSWORD_HASHING_BUSY' && attempt < 10) {
        await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
        continue;
      }
      throw new ConsoleError(`${method} ${route}`, res.status, parsed);
    }
  }

  /** Waits for the next TOTP step: a code is accepted once, so a second sign-in needs a new one. */
  async freshCode(secret) {
    const step = Math.floor(Date.now() / 30_000);
    if (this.lastStep === step) await new Promise((r) => setTimeout(r, (step + 1) * 30_000 - Date.now() + 200));
    this.lastStep = Math.floor(Date.now() / 30_000);
    return totp(secret);
  }

  async signIn({ email, password, newPassword, totpSecret }) {
    for (let attempt = 0; ; attempt++) {
      const answer = await this.call('POST', '/auth/login', { email, password });
      if (!answer || !answer.mfa_required) break;
      if (!totpSecret) throw new Error('the account has two-factor authentication: set CONSOLE_TOTP_SECRET');
      try {
        await this.call('POST', '/auth/mfa', { mfa_token: answer.mfa_token, code: await this.freshCode(totpSecret) });
        break;
      } catch (err) {
        // A code is accepted once: this step's may have been used already (by the run's
        // other sign-in, or an enrollment). Sign in again with the next step's code.
        if (!(err instanceof ConsoleError) || err.code !== 'INVALID_MFA_CODE' || attempt > 0) throw err;
        this.lastStep = Math.floor(Date.now() / 30_000);
      }
    }
    const me = await this.call('GET', '/me');
    if (me.password_must_change) {
      // An operator's password is temporary: choose our own, as the console's first page asks.
      if (!newPassword) throw new Error('the password is temporary (set by an operator): set CONSOLE_NEW_PASSWORD to the password to choose');
      await this.call('POST', '/me/password', { current_password: password, new_password: newPassword });
      this.passwordChanged = true;
    }
    return me;
  }

  /** POST /orgs/:org/keys; with two-factor authentication, confirms a current code first when asked. */
  async createKey(org, fields, totpSecret) {
    const route = `/orgs/${encodeURIComponent(org)}/keys`;
    try {
      return await this.call('POST', route, fields, { expect: [201] });
    } catch (err) {
      if (!(err instanceof ConsoleError) || err.code !== 'MFA_CHECK_REQUIRED' || !totpSecret) throw err;
      await this.call('POST', '/me/mfa/verify', { code: await this.freshCode(totpSecret) });
      return this.call('POST', route, fields, { expect: [201] });
    }
  }
}

function credentials() {
  const email = process.env.CONSOLE_EMAIL;
  const password = process.env.CONSOLE_PASSWORD;
  if (!email || !password) throw new Error('set CONSOLE_EMAIL and CONSOLE_PASSWORD (a console account that may manage keys)');
  return { email, password, newPassword: process.env.CONSOLE_NEW_PASSWORD, totpSecret: process.env.CONSOLE_TOTP_SECRET };
}

async function create(baseUrl, specFile, outDir) {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const creds = credentials();
  const session = new ConsoleSession(baseUrl);
  await session.signIn(creds);
  const made = [];
  const env = [];
  try {
    for (const s of spec) {
      const secrets = [];
      for (let i = 0; i < (s.count ?? 1); i++) {
        const fields = { name: s.count > 1 ? `${s.name}-${i + 1}` : s.name, classes: ['*'], description: 'k6 load test (scripts/load.sh); revoked at the end of the run' };
        if (s.quota !== undefined) fields.monthly_quota = s.quota;
        if (s.rate_limit !== undefined) fields.rate_limit_per_minute = s.rate_limit;
        const { key, secret } = await session.createKey(s.org, fields, creds.totpSecret);
        made.push({ org: s.org, id: key.id, name: key.name });
        // Checked so the env file can be sourced by a shell without quoting surprises.
        if (!/^[A-Za-z0-9_.~-]+$/.test(secret)) throw new Error(`key ${key.name}: unexpected characters in the secret`);
        secrets.push(secret);
      }
      env.push(`${s.var}=${secrets.join(',')}`);
    }
  } finally {
    // Written even after a failure, so the keys made so far are revoked too.
    writeFileSync(path.join(outDir, 'keys.json'), `${JSON.stringify({ password_changed: session.passwordChanged === true, totp_step: session.lastStep ?? null, keys: made })}\n`, { mode: 0o600 });
  }
  writeFileSync(path.join(outDir, 'keys.env'), `${env.join('\n')}\n`, { mode: 0o600 });
  process.stderr.write(`console-keys: created ${made.length} keys through the console API as ${creds.email}\n`);
}

async function revoke(baseUrl, outDir) {
  const { password_changed: changed, totp_step: usedStep, keys: made } = JSON.parse(readFileSync(path.join(outDir, 'keys.json'), 'utf8'));
  if (made.length === 0) return;
  const creds = credentials();
  // create chose a new password (the operator's was temporary): sign in with it.
  if (changed) creds.password = creds.newPassword;
  const session = new ConsoleSession(baseUrl);
  // The code create signed in with is spent: wait for a later one rather than be refused.
  if (usedStep !== null && usedStep !== undefined) session.lastStep = usedStep;
  await session.signIn(creds);
  let failed = 0;
  for (const k of made) {
    try {
      await session.call('POST', `/orgs/${encodeURIComponent(k.org)}/keys/${encodeURIComponent(k.id)}/revoke`, {});
    } catch (err) {
      failed += 1;
      process.stderr.write(`console-keys: could not revoke ${k.name}: ${err.message}\n`);
    }
  }
  await session.call('POST', '/auth/logout', {}, { expect: [204] }).catch(() => {});
  process.stderr.write(`console-keys: revoked ${made.length - failed} of ${made.length} keys\n`);
  if (failed > 0) process.exitCode = 1;
}

async function main() {
  const [command, baseUrl, ...rest] = process.argv.slice(2);
  try {
    if (command === 'create' && baseUrl && rest.length === 2) await create(baseUrl, rest[0], rest[1]);
    else if (command === 'revoke' && baseUrl && rest.length === 1) await revoke(baseUrl, rest[0]);
    else {
      process.stderr.write('usage: console-keys.mjs create <base URL> <spec.json> <out dir> | revoke <base URL> <out dir>\n');
      process.exitCode = 2;
    }
  } catch (err) {
    process.stderr.write(`console-keys: ${err.message}\n`);
    process.exitCode = 1;
  }
}

// Run as a program; imported (the test of totp()), do nothing.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
