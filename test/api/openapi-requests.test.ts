/**
 * Request bodies against /openapi.json as served: a rule the service refuses by must be one
 * the document states, and the refusal's answer must be one the document lists.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';

let t: TestApp;
let key: TestKey;
let doc: Record<string, any>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

before(async () => {
  t = await buildTestApp();
  key = await t.newKey();
  doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  ajv.addSchema({ ...doc, $id: 'openapi' });
});
after(async () => {
  await t?.close();
});

const SYNC = '/v1/cv/requests/sync';
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
const schemaAt = (ref: string) => ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
const requestValid = (body: unknown) => schemaAt(`openapi#/${pointer('paths', SYNC, 'post', 'requestBody', 'content', 'application/json', 'schema')}`)(body) === true;

test('an empty image_base64 is refused by the document as by the service, with the documented 400 INVALID_IMAGE_BASE64', async () => {
  const base64Branch = (doc.paths[SYNC].post.requestBody.content['application/json'].schema.oneOf as Array<{ properties: Record<string, any> }>).find(
    (b) => b.properties.image_base64 !== undefined,
  );
  assert.ok(base64Branch, 'the document has a base64 branch');
  assert.ok(base64Branch.properties.image_base64.minLength >= 1, 'image_base64 states its minimum length');

  const empty = { external_id: 'empty-base64', image_base64: '' };
  assert.equal(requestValid(empty), false, 'the document refuses an empty image_base64');
  assert.equal(requestValid({ external_id: 'one-image', image_base64: readFixture('camera.png').toString('base64') }), true);

  const res = await t.app.inject({ method: 'POST', url: SYNC, headers: { 'x-api-key': key.key }, payload: empty });
  assert.equal(res.statusCode, 400, res.body);
  const body = json(res);
  assert.equal(body.error_code, 'INVALID_IMAGE_BASE64', 'the code the service answers is unchanged');
  const documented = schemaAt(`openapi#/${pointer('paths', SYNC, 'post', 'responses', '400', 'content', 'application/json', 'schema')}`);
  assert.ok(documented(body), `the answer is the documented 400: ${res.body}\n${JSON.stringify(documented.errors)}`);
});
