/**
 * `__Host-` cookies when the console is published over https (PUBLIC_BASE_URL): the browser
 * then takes them only Secure, from this host, with Path=/ and no Domain, so a sibling
 * subdomain cannot plant or overwrite one (cookie tossing: a planted CSRF cookie defeats the
 * double submit, a planted session cookie signs the victim in as the attacker). Cookies under
 * the plain names are then ignored. Over plain http (local development), where browsers refuse
 * `__Host-` cookies, the plain names stay (console-api.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { API, PASSWORD, consoleUser } from '../helpers/console.js';

type Cookie = { name: string; value: string; path?: string; domain?: string; secure?: boolean; httpOnly?: boolean; sameSite?: string; maxAge?: number; expires?: Date };

describe('console published over https', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PUBLIC_BASE_URL: 'https://cv.example' });
    await consoleUser(t.db, 'host@example.com');
  });
  after(async () => {
    await t?.close();
  });

  const signIn = async () => {
    const res = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'host@example.com', password: PASSWORD } });
    assert.equal(res.statusCode, 200, res.body);
    return Object.fromEntries((res.cookies as Cookie[]).map((c) => [c.name, c]));
  };

  test('sign-in sets __Host- cookies: Secure, Path=/, no Domain, SameSite=Strict', async () => {
    const cookies = await signIn();
    assert.deepEqual(Object.keys(cookies).sort(), ['__Host-rc_access', '__Host-rc_csrf', '__Host-rc_refresh']);
    for (const c of Object.values(cookies)) {
      assert.equal(c.secure, true, c.name);
      assert.equal(c.path, '/', c.name);
      assert.equal(c.domain, undefined, c.name);
      assert.equal(c.sameSite, 'Strict', c.name);
    }
    assert.equal(cookies['__Host-rc_access'].httpOnly, true);
    assert.equal(cookies['__Host-rc_refresh'].httpOnly, true);
    assert.equal(cookies['__Host-rc_csrf'].httpOnly, undefined, 'the page reads it to echo it');
  });

  test('the __Host- cookies authenticate, refresh and sign out, with the CSRF double submit', async () => {
    const c = await signIn();
    const access = c['__Host-rc_access'].value;
    const csrf = c['__Host-rc_csrf'].value;
    assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { '__Host-rc_access': access } })).statusCode, 200);
    // unsafe methods: the header must repeat the __Host- CSRF cookie
    const noHeader = await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, cookies: { '__Host-rc_refresh': c['__Host-rc_refresh'].value, '__Host-rc_csrf': csrf }, payload: {} });
    assert.equal(noHeader.statusCode, 403);
    const refreshed = await t.app.inject({
      method: 'POST',
      url: `${API}/auth/refresh`,
      cookies: { '__Host-rc_refresh': c['__Host-rc_refresh'].value, '__Host-rc_csrf': csrf },
      headers: { 'x-csrf-token': csrf },
      payload: {},
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const next = Object.fromEntries((refreshed.cookies as Cookie[]).map((k) => [k.name, k]));
    assert.notEqual(next['__Host-rc_refresh'].value, c['__Host-rc_refresh'].value, 'rotated');
    assert.equal(next['__Host-rc_csrf'].value, csrf, 'the CSRF secret is kept across refreshes');
    const out = await t.app.inject({ method: 'POST', url: `${API}/auth/logout`, cookies: { '__Host-rc_access': next['__Host-rc_access'].value, '__Host-rc_csrf': csrf }, headers: { 'x-csrf-token': csrf } });
    assert.equal(out.statusCode, 204, out.body);
    // cleared under the same names, and with the attributes a browser needs to accept the deletion of a __Host- cookie
    const cleared = out.cookies as Cookie[];
    assert.deepEqual(cleared.map((k) => k.name).sort(), ['__Host-rc_access', '__Host-rc_csrf', '__Host-rc_refresh']);
    for (const k of cleared) {
      assert.equal(k.value, '');
      assert.equal(k.secure, true, k.name);
      assert.equal(k.path, '/', k.name);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { '__Host-rc_access': next['__Host-rc_access'].value } })).statusCode, 401);
  });

  test('cookies under the plain names (as a sibling subdomain could plant them) are ignored', async () => {
    const c = await signIn();
    const access = c['__Host-rc_access'].value;
    const csrf = c['__Host-rc_csrf'].value;
    // a valid token under the plain name opens nothing
    assert.equal((await t.app.inject({ method: 'GET', url: `${API}/me`, cookies: { rc_access: access } })).statusCode, 401);
    // a planted plain CSRF cookie, echoed by the page, does not pass the double submit
    const planted = await t.app.inject({
      method: 'POST',
      url: `${API}/orgs/00000000-0000-4000-8000-000000000000/keys`,
      cookies: { '__Host-rc_access': access, rc_csrf: 'planted-by-a-subdomain' },
      headers: { 'x-csrf-token': 'planted-by-a-subdomain' },
      payload: { name: 'x' },
    });
    assert.equal(planted.statusCode, 403, planted.body);
    assert.equal(planted.json().error_code, 'CSRF_FAILED');
    // a planted plain refresh cookie is not used
    const refresh = await t.app.inject({ method: 'POST', url: `${API}/auth/refresh`, cookies: { rc_refresh: c['__Host-rc_refresh'].value, '__Host-rc_csrf': csrf }, headers: { 'x-csrf-token': csrf }, payload: {} });
    assert.equal(refresh.statusCode, 401, refresh.body);
  });
});

describe('console published over plain http', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PUBLIC_BASE_URL: 'http://localhost:8080' });
    await consoleUser(t.db, 'plain@example.com');
  });
  after(async () => {
    await t?.close();
  });

  test('plain names (browsers refuse __Host- without Secure), not Secure', async () => {
    const res = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'x-console-session': 'cookie' }, payload: { email: 'plain@example.com', password: PASSWORD } });
    assert.equal(res.statusCode, 200, res.body);
    const cookies = res.cookies as Cookie[];
    assert.deepEqual(cookies.map((c) => c.name).sort(), ['rc_access', 'rc_csrf', 'rc_refresh']);
    for (const c of cookies) assert.equal(c.secure, undefined, c.name);
  });
});
