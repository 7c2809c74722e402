/** CONSOLE_ENABLED=false (the operator's spec.api.console.enabled): no console, no console API. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ CONSOLE_ENABLED: 'false' });
});
after(async () => {
  await t?.close();
});

test('the console and its API answer 404 when switched off; the public API still works', async () => {
  for (const url of ['/console/', '/console/api/v1/me']) {
    const res = await t.app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(json(res).error_code, 'ROUTE_NOT_FOUND');
  }
  const login = await t.app.inject({ method: 'POST', url: '/console/api/v1/auth/login', payload: { email: 'a@b.example', password: 'x' } });
  assert.equal(login.statusCode, 404);
  const key = await t.newKey();
  const lookup = await t.app.inject({ method: 'GET', url: '/v1/cv/requests/3f1c2a4e-9b7d-4c1e-8f00-000000000000', headers: { 'x-api-key': key.key } });
  assert.equal(json(lookup).error_code, 'REQUEST_NOT_FOUND');
});
