/**
 * Strict-Transport-Security on every answer when the service is published over https
 * (PUBLIC_BASE_URL): API, console page, console API, errors, unknown routes, image links,
 * probes. None when it is published over plain http (local development).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HSTS } from '../../src/api/transport-security.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const REQUESTS = [
  ['health probe', 'GET', '/healthz'],
  ['API, refused (no key)', 'POST', '/v1/cv/requests/sync'],
  ['API lookup, refused (no key)', 'GET', '/v1/cv/requests/00000000-0000-4000-8000-000000000000'],
  ['image link with a bad signature', 'GET', '/v1/cv/images/00000000-0000-4000-8000-000000000000?expires=1&signature=x'],
  ['unknown route', 'GET', '/no/such/route'],
  ['OpenAPI document', 'GET', '/openapi.json'],
  ['console page', 'GET', '/console/'],
  ['console API, unauthenticated', 'GET', '/console/api/v1/me'],
  ['console API, sign-in refused', 'POST', '/console/api/v1/auth/login'],
] as const;

describe('published over https', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PUBLIC_BASE_URL: 'https://cv.example' });
  });
  after(async () => {
    await t?.close();
  });

  for (const [name, method, url] of REQUESTS) {
    test(`${name}: ${method} ${url} carries HSTS`, async () => {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(res.headers['strict-transport-security'], HSTS, `${res.statusCode} ${res.body.slice(0, 200)}`);
    });
  }

  test('over a real connection too', async () => {
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${address}/v1/cv/requests/sync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000; includeSubDomains');
  });
});

describe('published over plain http', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PUBLIC_BASE_URL: 'http://localhost:8080' });
  });
  after(async () => {
    await t?.close();
  });

  test('no answer carries HSTS', async () => {
    for (const [name, method, url] of REQUESTS) {
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(res.headers['strict-transport-security'], undefined, name);
    }
  });
});
