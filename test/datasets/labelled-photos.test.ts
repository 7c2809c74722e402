// Keeps the hand-labelled evaluation set (datasets/labelled-photos) internally consistent,
// so mAP numbers measured on it mean what they say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

const root = path.resolve('datasets/labelled-photos');

interface CocoImage { id: number; file_name: string; width: number; height: number; license: number }
interface CocoAnnotation {
  id: number; image_id: number; category_id: number;
  bbox: [number, number, number, number]; area: number; iscrowd: number;
}
interface CocoCategory { id: number; name: string }
interface CocoLicense { id: number; name: string }
interface Coco { images: CocoImage[]; annotations: CocoAnnotation[]; categories: CocoCategory[]; licenses: CocoLicense[] }

// The 80 COCO detection classes with their official (non-contiguous) ids.
const COCO_NAMES: Record<number, string> = {
  1: 'person', 2: 'bicycle', 3: 'car', 4: 'motorcycle', 5: 'airplane', 6: 'bus', 7: 'train',
  8: 'truck', 9: 'boat', 10: 'traffic light', 11: 'fire hydrant', 13: 'stop sign',
  14: 'parking meter', 15: 'bench', 16: 'bird', 17: 'cat', 18: 'dog', 19: 'horse', 20: 'sheep',
  21: 'cow', 22: 'elephant', 23: 'bear', 24: 'zebra', 25: 'giraffe', 27: 'backpack',
  28: 'umbrella', 31: 'handbag', 32: 'tie', 33: 'suitcase', 34: 'frisbee', 35: 'skis',
  36: 'snowboard', 37: 'sports ball', 38: 'kite', 39: 'baseball bat', 40: 'baseball glove',
  41: 'skateboard', 42: 'surfboard', 43: 'tennis racket', 44: 'bottle', 46: 'wine glass',
  47: 'cup', 48: 'fork', 49: 'knife', 50: 'spoon', 51: 'bowl', 52: 'banana', 53: 'apple',
  54: 'sandwich', 55: 'orange', 56: 'broccoli', 57: 'carrot', 58: 'hot dog', 59: 'pizza',
  60: 'donut', 61: 'cake', 62: 'chair', 63: 'couch', 64: 'potted plant', 65: 'bed',
  67: 'dining table', 70: 'toilet', 72: 'tv', 73: 'laptop', 74: 'mouse', 75: 'remote',
  76: 'keyboard', 77: 'cell phone', 78: 'microwave', 79: 'oven', 80: 'toaster', 81: 'sink',
  82: 'refrigerator', 84: 'book', 85: 'clock', 86: 'vase', 87: 'scissors', 88: 'teddy bear',
  89: 'hair drier', 90: 'toothbrush',
};

const coco = JSON.parse(readFileSync(path.join(root, 'annotations.json'), 'utf8')) as Coco;

test('the COCO name table itself has the 80 classes', () => {
  assert.equal(Object.keys(COCO_NAMES).length, 80);
});

test('ids are unique and every annotation points at an image and a category', () => {
  const imageIds = new Set(coco.images.map((i) => i.id));
  const annIds = new Set(coco.annotations.map((a) => a.id));
  const catIds = new Set(coco.categories.map((c) => c.id));
  assert.equal(imageIds.size, coco.images.length, 'image ids unique');
  assert.equal(annIds.size, coco.annotations.length, 'annotation ids unique');
  assert.equal(catIds.size, coco.categories.length, 'category ids unique');
  assert.equal(new Set(coco.images.map((i) => i.file_name)).size, coco.images.length, 'file names unique');
  for (const a of coco.annotations) {
    assert.ok(imageIds.has(a.image_id), `annotation ${a.id}: unknown image ${a.image_id}`);
    assert.ok(catIds.has(a.category_id), `annotation ${a.id}: unknown category ${a.category_id}`);
  }
});

test('categories use the official COCO ids and names', () => {
  for (const c of coco.categories) {
    assert.equal(COCO_NAMES[c.id], c.name, `category ${c.id}`);
  }
});

test('every image file exists with the stated size, and every file is listed', async () => {
  const listed = new Set(coco.images.map((i) => i.file_name));
  for (const f of readdirSync(path.join(root, 'images'))) {
    assert.ok(listed.has(f), `images/${f} is not in annotations.json`);
  }
  for (const img of coco.images) {
    const file = path.join(root, 'images', img.file_name);
    assert.ok(existsSync(file), `${img.file_name} missing`);
    const meta = await sharp(file).metadata();
    assert.equal(meta.width, img.width, `${img.file_name} width`);
    assert.equal(meta.height, img.height, `${img.file_name} height`);
  }
});

test('boxes have positive size, lie inside their image, and area matches', () => {
  const byId = new Map(coco.images.map((i) => [i.id, i]));
  for (const a of coco.annotations) {
    const img = byId.get(a.image_id);
    assert.ok(img);
    const [x, y, w, h] = a.bbox;
    assert.ok(a.bbox.every(Number.isFinite), `annotation ${a.id}: bbox numbers`);
    assert.ok(w > 0 && h > 0, `annotation ${a.id}: empty box`);
    assert.ok(x >= 0 && y >= 0 && x + w <= img.width && y + h <= img.height, `annotation ${a.id}: outside ${img.file_name}`);
    assert.equal(a.area, w * h, `annotation ${a.id}: area`);
    assert.ok(a.iscrowd === 0 || a.iscrowd === 1, `annotation ${a.id}: iscrowd is 0 or 1`);
  }
});

test('every image is labelled and the set is the size its README states', () => {
  // A photo may hold only a crowd region (sklearn-china.jpg: boats too small to box one by one).
  const labelled = new Set(coco.annotations.map((a) => a.image_id));
  for (const img of coco.images) assert.ok(labelled.has(img.id), `${img.file_name} has no boxes`);
  const used = new Set(coco.annotations.map((a) => a.category_id));
  assert.equal(used.size, coco.categories.length, 'every listed category is used');
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const stated = /(\d+) real photographs with (\d+) hand-drawn boxes \(and (\d+) crowd regions\) in (\d+) COCO classes/.exec(readme);
  assert.ok(stated, 'the README states the size of the set');
  const objects = coco.annotations.filter((a) => !a.iscrowd).length;
  const crowds = coco.annotations.length - objects;
  assert.deepEqual(stated.slice(1).map(Number), [coco.images.length, objects, crowds, coco.categories.length], 'photos, boxes, crowd regions, classes as the README states');
  // Every photo has its row of source, licence and changes in the README's table.
  const rows = new Set([...readme.matchAll(/^\| ([^ |]+) \| \d+×\d+ \|/gm)].map((m) => m[1]));
  for (const img of coco.images) assert.ok(rows.has(img.file_name), `${img.file_name} has no row in the README's sources table`);
  assert.equal(rows.size, coco.images.length, 'no row for a photo the set does not hold');
});

test('every image names a licence of the set, and is stored upright', async () => {
  const licences = new Set(coco.licenses.map((l) => l.id));
  assert.equal(licences.size, coco.licenses.length, 'licence ids unique');
  for (const img of coco.images) {
    assert.ok(licences.has(img.license), `${img.file_name}: licence ${img.license} is not listed`);
    // Boxes are in the pixels as stored; an EXIF rotation would put the service's boxes in another frame.
    const { orientation } = await sharp(path.join(root, 'images', img.file_name)).metadata();
    assert.ok(orientation === undefined || orientation === 1, `${img.file_name}: EXIF orientation ${orientation}`);
  }
  for (const l of coco.licenses) assert.ok(coco.images.some((i) => i.license === l.id), `licence ${l.id} (${l.name}) is used`);
});
