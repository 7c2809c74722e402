/**
 * The public routes validate with the contract's schemas (src/contract/public-api.ts): every
 * refusal keeps the catalogue code and message the contract has always given, nothing is
 * coerced, and the rules the schemas state (lengths in code points, no lone surrogates) are
 * the ones the document states and the service applies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { EXTERNAL_ID_PATTERN, IMAGE_URL_PATTERN } from '../../src/contract/public-api.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';

let t: TestApp;
let key: TestKey;
let doc: Record<string, any>;
const ajv = new Ajv2020({ strict: false });
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
const BATCH = '/v1/cv/requests/batch';
const FEEDBACK = '/v1/cv/feedback';
const ID = '0b7e3c52-9f0e-4c55-9c43-5a0f2d7a4b11';
const EXTERNAL_ID_MESSAGE = 'external_id must be 1 to 255 characters, without control characters or lone UTF-16 surrogates';
const EMOJI = '\u{1F600}';

const post = (url: string, body: unknown) =>
  t.app.inject({ method: 'POST', url, headers: { 'x-api-key': key.key, 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
const documented = (url: string, body: unknown) => {
  const pointer = ['paths', url, 'post', 'requestBody', 'content', 'application/json', 'schema'].map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  const ref = `openapi#/${pointer}`;
  return (ajv.getSchema(ref) ?? ajv.compile({ $ref: ref }))(body) === true;
};

describe('each refusal keeps its code and message', () => {
  const cases: Array<[string, string, unknown, string, string]> = [
    ['sync', SYNC, [1, 2], 'INVALID_PARAMETERS', 'The body must be a JSON object with external_id and image_url or image_base64'],
    ['sync', SYNC, {}, 'INVALID_PARAMETERS', 'external_id is required'],
    ['sync', SYNC, { external_id: '' }, 'INVALID_EXTERNAL_ID', EXTERNAL_ID_MESSAGE],
    ['sync', SYNC, { external_id: 'x' }, 'INVALID_PARAMETERS', 'Exactly one of image_url and image_base64 is required'],
    ['sync', SYNC, { external_id: 'x', image_url: 5, image_base64: 'aGVsbG8=' }, 'INVALID_PARAMETERS', 'Exactly one of image_url and image_base64 is required'],
    ['sync', SYNC, { external_id: 'x', image_url: 5 }, 'INVALID_PARAMETERS', 'image_url must be a string'],
    ['sync', SYNC, { external_id: 'x', image_base64: ['a'] }, 'INVALID_PARAMETERS', 'image_base64 must be a string'],
    ['sync', SYNC, { external_id: 'x', image_base64: '' }, 'INVALID_IMAGE_BASE64', 'image_base64 contains no data'],
    ['sync', SYNC, '', 'INVALID_PARAMETERS', 'The body must be a JSON object with external_id and image_url or image_base64'],
    ['batch', BATCH, null, 'MISSING_IMAGE_URLS', 'image_urls is required: send 1 to 10 image URLs'],
    ['batch', BATCH, '', 'MISSING_IMAGE_URLS', 'image_urls is required: send 1 to 10 image URLs'],
    ['batch', BATCH, [1], 'INVALID_PARAMETERS', 'The body must be a JSON object with image_urls'],
    ['batch', BATCH, { image_urls: null }, 'MISSING_IMAGE_URLS', 'image_urls is required and must not be empty'],
    ['batch', BATCH, { image_urls: 'x' }, 'INVALID_PARAMETERS', 'image_urls must be an array of URLs'],
    ['batch', BATCH, { image_urls: Array(12).fill(1) }, 'TOO_MANY_IMAGES', 'Too many images: the maximum is 10 per batch, received 12'],
    ['batch', BATCH, { image_urls: ['x', null] }, 'INVALID_PARAMETERS', 'image_urls must contain only strings'],
    ['batch', BATCH, { image_urls: ['x'], external_id: 5 }, 'INVALID_EXTERNAL_ID', EXTERNAL_ID_MESSAGE],
    ['feedback', FEEDBACK, 'null', 'INVALID_PARAMETERS', 'The body must be a JSON object with request_id and rating'],
    ['feedback', FEEDBACK, { rating: 1 }, 'INVALID_REQUEST_ID', 'request_id is required'],
    ['feedback', FEEDBACK, { request_id: `urn:uuid:${ID}`, rating: 1 }, 'INVALID_REQUEST_ID', 'request_id must be a UUID'],
    ['feedback', FEEDBACK, { request_id: ID, rating: '1' }, 'INVALID_RATING', 'Invalid rating: the rating must be -1 (bad), 0 (neutral) or 1 (good)'],
  ];
  for (const [name, url, body, code, message] of cases) {
    test(`${name} ${JSON.stringify(body)} → ${code}`, async () => {
      const res = await post(url, body);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([json(res).error_code, json(res).message], [code, message]);
    });
  }

  test('lookup: a bad id and a missing one', async () => {
    const get = (path: string) => t.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key.key } });
    assert.equal(json(await get('/v1/cv/requests/nope')).message, 'The request id must be a UUID');
    assert.equal(json(await get('/v1/cv/requests/')).message, 'The request id is missing');
  });
});

describe('rules the schemas state, stated alike in the document and by the service', () => {
  test('external_id counts 255 characters in code points: 255 emoji pass, 256 do not', async () => {
    const ok = { external_id: EMOJI.repeat(255), image_url: 'ftp://example.com/a.png' };
    const over = { ...ok, external_id: EMOJI.repeat(256) };
    assert.equal(documented(SYNC, ok), true);
    assert.equal(documented(SYNC, over), false);
    assert.equal(json(await post(SYNC, ok)).error_code, 'INVALID_IMAGE_URL', 'past the external_id rule (then refused as ftp)');
    assert.equal(json(await post(SYNC, over)).error_code, 'INVALID_EXTERNAL_ID');
  });

  test('image_url counts 2048 characters in code points, in the schema and in the fetcher alike', async () => {
    const prefix = 'ftp://example.com/';
    const ok = { external_id: 'long-url', image_url: prefix + EMOJI.repeat(2048 - prefix.length) };
    const over = { external_id: 'long-url', image_url: prefix + EMOJI.repeat(2049 - prefix.length) };
    assert.ok(ok.image_url.length > 2048, 'over the limit in UTF-16 units');
    assert.equal(documented(SYNC, ok), true);
    assert.equal(documented(SYNC, over), false);
    const refused = json(await post(SYNC, ok));
    assert.equal(refused.error_code, 'INVALID_IMAGE_URL');
    assert.match(refused.message as string, /http or https/, 'refused for its scheme, not its length');
    assert.equal(json(await post(SYNC, over)).error_code, 'INVALID_IMAGE_URL');
  });

  test('the patterns refuse lone surrogates only, read with or without the u flag', () => {
    for (const flags of ['u', '']) {
      const externalId = new RegExp(EXTERNAL_ID_PATTERN, flags);
      const imageUrl = new RegExp(IMAGE_URL_PATTERN, flags);
      for (const ok of [`a${EMOJI}b`, 'plain']) {
        assert.ok(externalId.test(ok) && imageUrl.test(ok), `${flags}: ${ok}`);
      }
      for (const lone of ['a\uD800', '\uDC00b', '\uD800\uD800', `${EMOJI}\uDFFF`]) {
        assert.ok(!externalId.test(lone) && !imageUrl.test(lone), `${flags}: ${JSON.stringify(lone)}`);
      }
      assert.ok(!externalId.test('a\u0085b') && imageUrl.test('a\u0085b'), 'control characters: refused in external_id only');
    }
  });

  test('lone surrogates are refused by the document as by the service (and a rating is never coerced)', async () => {
    const body = '{"external_id":"ok","image_url":"http://example.com/\\ud800.png"}';
    assert.equal(documented(SYNC, JSON.parse(body)), false);
    assert.equal(json(await post(SYNC, body)).error_code, 'INVALID_IMAGE_URL');
    assert.equal(documented(FEEDBACK, { request_id: ID, rating: '1' }), false);
  });
});
