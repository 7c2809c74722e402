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

test('the weight is an integer percent', () => {
  for (const bad of ['-1', '101', '12.5', 'half']) {
    assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: bad, CANARY_MODEL_VERSION: '2' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, new RegExp(`CANARY_WEIGHT must be an integer from 0 to 100 \\(got "${bad.replace('.', '\\.')}"\\)`));
      return true;
    });
  }
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '100', CANARY_MODEL_VERSION: '2' }).canaryWeight, 100);
});

test('a canary that is the stable model itself is refused', () => {
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '10', CANARY_MODEL_VERSION: '1' }), /the canary \(CANARY_MODEL_NAME "centernet", CANARY_MODEL_VERSION "1"\) is the stable model itself/);
  // Both "latest" of the same model: the same thing twice.
  assert.throws(() => loadConfig({ TRITON_URL: 'triton:8001', CANARY_WEIGHT: '10' }), /is the stable model itself/);
  // Weight 0 is no canary: the names may stay set (the operator keeps them while at 0).
  assert.equal(loadConfig({ ...TRITON, CANARY_WEIGHT: '0', CANARY_MODEL_VERSION: '1' }).canaryWeight, 0);
});

test('a canary without TRITON_URL is refused: the embedded runtime serves one model', () => {
  assert.throws(() => loadConfig({ CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2' }), /CANARY_WEIGHT needs TRITON_URL/);
});

test('a canary of another model needs its own catalog', () => {
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_NAME: 'yolo' }), /CANARY_MODEL_CATALOG is required when the canary is another model \("yolo", not "centernet"\)/);
  assert.throws(() => loadConfig({ ...TRITON, CANARY_WEIGHT: '5', CANARY_MODEL_VERSION: '2', CANARY_MODEL_CATALOG: 's3://x' }), /CANARY_MODEL_CATALOG must be a file or s3:\/\/bucket\/key/);
});

test('routing: the first 32 bits of SHA-256 of the external_id, mod 100, below the weight', () => {
  // SHA-256 of "" starts e3b0c442: 3820012610 mod 100 = 10.
  assert.equal(canaryBucket(''), 10);
  assert.equal(canarySide('', 10), 'stable');
  assert.equal(canarySide('', 11), 'canary');
  for (let i = 0; i < 500; i++) {
    const id = `order-${i}`;
    const bucket = Number.parseInt(createHash('sha256').update(id).digest('hex').slice(0, 8), 16) % 100;
    assert.equal(canaryBucket(id), bucket, id);
    // Weight 0: never the canary; 100: always; raising the weight only moves ids to the canary.
    assert.equal(canarySide(id, 0), 'stable');
    assert.equal(canarySide(id, 100), 'canary');
    let seenCanary = false;
    for (let w = 0; w <= 100; w += 5) {
      const side = canarySide(id, w);
      if (seenCanary) assert.equal(side, 'canary', `${id} went back to stable at weight ${w}`);
      seenCanary ||= side === 'canary';
    }
  }
});
