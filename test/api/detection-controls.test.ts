/** Per-request detection controls (min_confidence, max_results, classes) on sync and batch, on the real model. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readFixture } from '../helpers/fixtures.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';

interface Det {
  label: string;
  confidence: number;
}

let t: TestApp;
let images: ImageServer;
let key: TestKey;
/** The basketball image's detections with no controls, in the detector's order. */
let plain: Det[];
let people: Det[];
const basketball = readFixture('basketball1.png').toString('base64');
let n = 0;
const eid = () => `controls-${++n}`;

function sync(body: object, k: TestKey = key) {
  return t.app.inject({ method: 'POST', url: '/v1/cv/requests/sync', headers: { 'x-api-key': k.key }, payload: body });
}
function batch(body: object, k: TestKey = key) {
  return t.app.inject({ method: 'POST', url: '/v1/cv/requests/batch', headers: { 'x-api-key': k.key }, payload: body });
}
const labelsOf = (ds: Det[]) => ds.map((d) => d.label);

before(async () => {
  t = await buildTestApp();
  images = await startImageServer();
  key = await t.newKey();
  const res = await sync({ external_id: eid(), image_base64: basketball });
  assert.equal(res.statusCode, 200, res.body);
  plain = json<any>(res).results;
  people = plain.filter((d) => d.label === 'person').sort((a, b) => b.confidence - a.confidence);
  assert.ok(people.length >= 2, 'the basketball image has two people');
});
after(async () => {
  await images?.close();
  await t?.close();
});

describe('sync', () => {
  test('max_results 1 returns the top detection; the lookup returns the stored, filtered result', async () => {
    const res = await sync({ external_id: eid(), image_base64: basketball, max_results: 1 });
    assert.equal(res.statusCode, 200, res.body);
    const body = json<any>(res);
    assert.equal(body.results.length, 1);
    assert.equal(body.results[0].confidence, Math.max(...plain.map((d) => d.confidence)));
    const looked = json<any>(await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${body.request_id}`, headers: { 'x-api-key': key.key } }));
    assert.deepEqual(looked.results, body.results);
    const row = await t.db('requests').where({ id: body.request_id }).first();
    assert.equal(row.results.length, 1);
  });

  test('max_results orders by confidence, highest first', async () => {
    const body = json<any>(await sync({ external_id: eid(), image_base64: basketball, max_results: 100 }));
    const confidences = body.results.map((d: Det) => d.confidence);
    assert.equal(body.results.length, plain.length);
    assert.deepEqual(confidences, [...confidences].sort((a: number, b: number) => b - a));
  });

  test('min_confidence above the second person drops it; 0 returns what the default returns', async () => {
    const threshold = (people[0].confidence + people[1].confidence) / 2;
    const body = json<any>(await sync({ external_id: eid(), image_base64: basketball, min_confidence: threshold }));
    assert.ok(body.results.every((d: Det) => d.confidence >= threshold));
    assert.equal(body.results.filter((d: Det) => d.label === 'person').length, 1);
    const zero = json<any>(await sync({ external_id: eid(), image_base64: basketball, min_confidence: 0 }));
    assert.deepEqual(labelsOf(zero.results), labelsOf(plain));
  });

  test('classes keeps only those labels; a label absent from the image returns none', async () => {
    const persons = json<any>(await sync({ external_id: eid(), image_base64: basketball, classes: ['person'] }));
    assert.deepEqual(labelsOf(persons.results), labelsOf(plain).filter((l) => l === 'person'));
    const absent = json<any>(await sync({ external_id: eid(), image_base64: basketball, classes: ['toaster'] }));
    assert.equal(absent.status, 'DONE');
    assert.deepEqual(absent.results, []);
  });

  test('classes narrows a narrow key', async () => {
    const k = await t.newKey({ classes: ['person', 'sports ball'] });
    const body = json<any>(await sync({ external_id: eid(), image_base64: basketball, classes: ['sports ball'] }, k));
    assert.equal(body.status, 'DONE');
    assert.deepEqual(labelsOf(body.results), labelsOf(plain).filter((l) => l === 'sports ball'));
  });

  test('a replay answers the stored result whatever the new controls', async () => {
    const external = eid();
    const first = json<any>(await sync({ external_id: external, image_base64: basketball, max_results: 1 }));
    const again = await sync({ external_id: external, image_base64: basketball, classes: ['toaster'], min_confidence: 0.99 });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    // The stored image's link is signed as each answer is made, so its expiry moves with the
    // clock: the same image, and otherwise the same answer.
    const { image_url: againLink, ...againRest } = json<any>(again);
    const { image_url: firstLink, ...firstRest } = first;
    assert.deepEqual(againRest, firstRest);
    assert.equal(new URL(againLink).pathname, new URL(firstLink).pathname);
  });
});

describe('batch', () => {
  test('the controls apply to every image, and the lookup returns the stored result', async () => {
    const url = images.url('/images/basketball1.png');
    const top = json<any>(await batch({ image_urls: [url, url], max_results: 1 }));
    for (const entry of top.results) {
      assert.equal(entry.status, 'DONE');
      assert.equal(entry.results.length, 1);
      assert.equal(entry.results[0].confidence, Math.max(...plain.map((d) => d.confidence)));
      const looked = json<any>(await t.app.inject({ method: 'GET', url: `/v1/cv/requests/${entry.request_id}`, headers: { 'x-api-key': key.key } }));
      assert.deepEqual(looked.results, entry.results);
    }
    const threshold = (people[0].confidence + people[1].confidence) / 2;
    const confident = json<any>(await batch({ image_urls: [url], min_confidence: threshold, classes: ['person'] }));
    assert.equal(confident.results[0].results.length, 1);
    const absent = json<any>(await batch({ image_urls: [url], classes: ['toaster'] }));
    assert.equal(absent.results[0].status, 'DONE');
    assert.deepEqual(absent.results[0].results, []);
  });
});

describe('refusals: 400 with code and message, nothing charged or written', () => {
  const cases: Array<[string, object, string]> = [
    ['min_confidence above 1', { min_confidence: 1.5 }, 'min_confidence must be a number from 0 to 1'],
    ['min_confidence below 0', { min_confidence: -0.1 }, 'min_confidence must be a number from 0 to 1'],
    ['min_confidence a string', { min_confidence: '0.5' }, 'min_confidence must be a number from 0 to 1'],
    ['max_results 0', { max_results: 0 }, 'max_results must be an integer from 1 to 100'],
    ['max_results 101', { max_results: 101 }, 'max_results must be an integer from 1 to 100'],
    ['max_results not an integer', { max_results: 1.5 }, 'max_results must be an integer from 1 to 100'],
    ['classes not an array', { classes: 'person' }, 'classes must be an array of 1 to 100 labels'],
    ['classes empty', { classes: [] }, 'classes must be an array of 1 to 100 labels'],
    ['classes over 100', { classes: Array.from({ length: 101 }, (_, i) => `c${i}`) }, 'classes must be an array of 1 to 100 labels'],
    ['classes repeated', { classes: ['person', 'person'] }, 'classes must not repeat a label'],
    ['a class empty', { classes: [''] }, 'each of classes must be a label of 1 to 100 characters'],
    ['a class too long', { classes: ['x'.repeat(101)] }, 'each of classes must be a label of 1 to 100 characters'],
    ['a class not a string', { classes: [1] }, 'each of classes must be a label of 1 to 100 characters'],
    ['an unknown class for a "*" key', { classes: ['person', 'unicorn'] }, 'classes: "unicorn" is not in the model catalog'],
  ];

  async function assertRefused(send: (k: TestKey) => Promise<{ statusCode: number; body: string }>, message: string, classes?: string[]) {
    const k = await t.newKey({ balance: 3, ...(classes ? { classes } : {}) });
    const res = await send(k);
    assert.equal(res.statusCode, 400, res.body);
    const body = json<any>(res);
    assert.equal(body.error_code, 'INVALID_PARAMETERS');
    assert.equal(body.message, message);
    assert.equal((await t.db('requests').where({ key_id: k.id })).length, 0);
    assert.equal((await t.db('organizations').where({ id: k.orgId }).first()).balance, 3);
  }

  for (const [name, controls, message] of cases) {
    test(`sync: ${name}`, () => assertRefused((k) => sync({ external_id: eid(), image_base64: basketball, ...controls }, k), message));
    test(`batch: ${name}`, () => assertRefused((k) => batch({ image_urls: [images.url('/images/basketball1.png')], ...controls }, k), message));
  }

  test('a class outside the key\'s classes, on sync and batch', async () => {
    const message = 'classes: "sports ball" is not one of the classes of this API key';
    await assertRefused((k) => sync({ external_id: eid(), image_base64: basketball, classes: ['person', 'sports ball'] }, k), message, ['person']);
    await assertRefused((k) => batch({ image_urls: [images.url('/images/basketball1.png')], classes: ['sports ball'] }, k), message, ['person']);
  });
});
