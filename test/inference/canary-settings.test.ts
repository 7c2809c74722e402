/** The canary's settings (CANARY_*) and the routing rule shared with the operator. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { canaryBucket, canarySide } from '../../src/recognition/canary.js';

const TRITON = { TRITON_URL: 'triton:8001', TRITON_MODEL_NAME: 'centernet', TRITON_MODEL_VERSION: '1' };

test('no canary by default; a canary of another version defaults to the stable name and catalog', () => {
  const none = loadConfig({});
  assert.equal(none.canaryWeight, 0);
  assert.equal(none.canaryModelVersion, '');
  const c = loadConfig({ ...TRITON, MODEL_CATALOG: 'cat.json', CANARY_WEIGHT: '30', CANARY_MODEL_VERSION: '2' });
  assert.equal(c.canaryWeight, 30);
  assert.equal(c.canaryModelName, 'centernet');
  assert.equal(c.canaryModelVersion, '2');
  assert.equal(c.canaryModelCatalog, path.resolve('cat.json'));
  const other = loadConfig({ ...TRITON, CANARY_WEIGHT: '100', CANARY_MODEL_NAME: 'yolo', CANARY_MODEL_CATALOG: 's3://models/yolo/catalog.json' });
  assert.equal(other.canaryModelCatalog, 's3://models/yolo/catalog.json');
});

test('the weight is an integer percent, written in digits', () => {
  for (const bad of ['-1', '101', '12.5', 'half', '1e1', '0x1A', ' 5', '5 ', '+5']) {
    assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: bad, CANARY_MODEL_VERSION: '2' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.ok(err.message.includes(`CANARY_WEIGHT must be an integer from 0 to 100 (got "${bad}")`), err.message);
      return true;
    });
  }
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '100', CANARY_MODEL_VERSION: '2' }).canaryWeight, 100);
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '007', CANARY_MODEL_VERSION: '2' }).canaryWeight, 7);
});

test("versions and the canary's name follow the CRD's patterns", () => {
  for (const bad of ['0', '01', 'v2', '1.2', ' 3', '-1', '1e3']) {
    assert.throws(() => loadConfig({ ...TRITON, TRITON_MODEL_VERSION: bad }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.ok(err.message.includes(`TRITON_MODEL_VERSION must be a model version, a positive integer such as 2, or empty for the latest (got "${bad}")`), err.message);
      return true;
    });
    assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: bad }), /CANARY_MODEL_VERSION must be a model version/);
  }
  assert.equal(loadConfig({ ...TRITON, TRITON_MODEL_VERSION: '12' }).tritonModelVersion, '12');
  for (const bad of ['a/b', 'yolo v8', 'x'.repeat(129)]) {
    assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_NAME: bad, CANARY_MODEL_CATALOG: 'c.json' }), /CANARY_MODEL_NAME must be a model name/);
  }
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_NAME: 'yolo_v8.1-x', CANARY_MODEL_CATALOG: 'c.json' }).canaryModelName, 'yolo_v8.1-x');
});

test("the canary's budget: the request's deadline minus CANARY_RESERVE_MS, which must leave it some", () => {
  assert.equal(loadConfig({}).canaryReserveMs, 5000);
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2', CANARY_RESERVE_MS: '0' }).canaryReserveMs, 0);
  assert.throws(() => loadConfig({ ...TRITON, CANARY_RESERVE_MS: '-1' }), /CANARY_RESERVE_MS must be an integer from 0/);
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2', SYNC_TIMEOUT_MS: '5000' }), /CANARY_RESERVE_MS \(5000\) must be below SYNC_TIMEOUT_MS \(5000\)/);
});

test('a canary that is the stable model itself is refused', () => {
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '10', CANARY_MODEL_VERSION: '1' }), /the canary \(CANARY_MODEL_NAME "centernet", CANARY_MODEL_VERSION "1"\) is the stable model itself/);
  // Weight 0 is no canary: the names may stay set (the operator keeps them while at 0).
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '0', CANARY_MODEL_VERSION: '1' }).canaryWeight, 0);
});

test("a canary of the same model needs TRITON_MODEL_VERSION: '' (the latest) could be the canary itself", () => {
  const NEEDS = /a canary of the same model \(CANARY_MODEL_NAME "centernet"\) needs TRITON_MODEL_VERSION/;
  assert.throws(() => loadConfig({ TRITON_URL: 'triton:8001', CANARY_WEIGHT: '10' }), NEEDS);
  assert.throws(() => loadConfig({ TRITON_URL: 'triton:8001', CANARY_WEIGHT: '10', CANARY_MODEL_VERSION: '2' }), NEEDS);
  // Another model has its own versions: no stable version needed.
  assert.equal(loadConfig({ TRITON_URL: 'triton:8001', CANARY_WEIGHT: '10', CANARY_MODEL_NAME: 'yolo', CANARY_MODEL_CATALOG: 'y.json' }).tritonModelVersion, '');
});

test('a canary without TRITON_URL is refused: the embedded runtime serves one model', () => {
  assert.throws(() => loadConfig({ CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2' }), /CANARY_WEIGHT needs TRITON_URL/);
});

test('a canary of another model needs its own catalog', () => {
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_NAME: 'yolo' }), /CANARY_MODEL_CATALOG is required when the canary is another model \("yolo", not "centernet"\)/);
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2', CANARY_MODEL_CATALOG: 's3://x' }), /CANARY_MODEL_CATALOG must be a file or s3:\/\/bucket\/key/);
});

/** The agreed rule, computed here from the hex digest: SHA-256 of `<canary name>:<canary version>:<external_id>`. */
const bucketOf = (name: string, version: string, id: string) => Number.parseInt(createHash('sha256').update(`${name}:${version}:${id}`).digest('hex').slice(0, 8), 16) % 100;

test("routing: the first 32 bits of SHA-256 of '<canary name>:<canary version>:<external_id>', mod 100, below the weight", () => {
  const rollout = { name: 'centernet', version: '2' };
  // SHA-256 of "centernet:2:" starts ed7e1492: 3984462994 mod 100 = 94.
  assert.equal(bucketOf('centernet', '2', ''), 94);
  assert.equal(canaryBucket('', rollout), 94);
  assert.equal(canarySide('', rollout, 94), 'stable');
  assert.equal(canarySide('', rollout, 95), 'canary');
  for (let i = 0; i < 500; i++) {
    const id = `order-${i}`;
    assert.equal(canaryBucket(id, rollout), bucketOf('centernet', '2', id), id);
    // Weight 0: never the canary; 100: always; raising the weight only moves ids to the canary.
    assert.equal(canarySide(id, rollout, 0), 'stable');
    assert.equal(canarySide(id, rollout, 100), 'canary');
    let seenCanary = false;
    for (let w = 0; w <= 100; w += 5) {
      const side = canarySide(id, rollout, w);
      if (seenCanary) assert.equal(side, 'canary', `${id} went back to stable at weight ${w}`);
      seenCanary ||= side === 'canary';
    }
  }
});

test('routing: another rollout (canary name or version) canaries other ids', () => {
  const ids = Array.from({ length: 1000 }, (_, i) => `order-${i}`);
  const canaried = (name: string, version: string) => new Set(ids.filter((id) => canarySide(id, { name, version }, 20) === 'canary'));
  const v2 = canaried('centernet', '2');
  for (const other of [canaried('centernet', '3'), canaried('yolo', '')]) {
    const shared = [...v2].filter((id) => other.has(id)).length;
    // Independent 20% samples of 1000 share about 40 ids; one salt for all would share all ~200.
    assert.ok(shared < v2.size / 2, `${shared} of ${v2.size} ids canaried by both rollouts`);
  }
});
