import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { centernetCatalog, centernetSourceFiles } from '../../tools/model/centernet.js';
import { parseCatalog } from '../../src/models/catalog.js';
import { COCO_CLASSES } from '../../tools/model/coco.js';

test('class indices name the same labels as the model package itself uses', async () => {
  // @vladmandic/human maps this model's class index to a label with src/object/labels.ts.
  const file = path.join(path.dirname(centernetSourceFiles().json), '..', 'src', 'object', 'labels.ts');
  const theirs = [...(await readFile(file, 'utf8')).matchAll(/label: '([^']+)'/g)].map((m) => m[1]);
  assert.equal(theirs.length, 80);
  assert.deepEqual(COCO_CLASSES.map((c) => c.label), theirs);
});

test('the shipped catalog is valid and uses the official COCO category ids', () => {
  const catalog = parseCatalog(centernetCatalog(), 'shipped');
  const ids = catalog.classes.map((c) => Number(c.external_id.replace(/^coco:/, '')));
  assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]), 'ids increase with the index');
  assert.equal(ids[0], 1);
  assert.equal(ids[79], 90);
  // The ten ids COCO never used.
  const unused = Array.from({ length: 90 }, (_, i) => i + 1).filter((id) => !ids.includes(id));
  assert.deepEqual(unused, [12, 26, 29, 30, 45, 66, 68, 69, 71, 83]);
});
