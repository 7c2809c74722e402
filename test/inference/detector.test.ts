import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { crc32 } from 'node:zlib';
import { ImageError } from '../../src/images/errors.js';
import { InferenceError, type InferenceBackend } from '../../src/inference/backend.js';
import { createDetector } from '../../src/inference/create-detector.js';
import { Detector } from '../../src/inference/detector.js';
import { readCatalog } from '../../src/models/catalog-source.js';
import type { BoundingBox, Detection, ObjectDetector } from '../../src/recognition/detection.js';
import { readFixture } from '../helpers/fixtures.js';
import { testConfig } from './model.js';

function overlap(a: BoundingBox, b: BoundingBox): number {
  const iw = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const ih = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (iw <= 0 || ih <= 0) return 0;
  return (iw * ih) / (a.width * a.height + b.width * b.height - iw * ih);
}

/** The best IoU of a `label` detection with the hand-measured box. */
function bestMatch(detections: Detection[], label: string, truth: BoundingBox): number {
  return Math.max(0, ...detections.filter((d) => d.label === label).map((d) => overlap(d.bounding_box, truth)));
}

function labels(detections: Detection[]): string[] {
  return [...new Set(detections.map((d) => d.label))].sort();
}

function isImageError(code: string) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof ImageError, `expected ImageError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  };
}

describe('Detector on real images with the real model', () => {
  let detector: ObjectDetector;
  let backend: InferenceBackend;

  before(async () => {
    ({ detector, backend } = await createDetector(testConfig({ INFERENCE_THREADS: '2' })));
  });
  after(() => backend?.close());

  test('knows its model and the 80 COCO labels of the catalog', () => {
    assert.deepEqual(detector.model, { name: 'centernet', version: '1' });
    const all = detector.labels();
    assert.equal(all.length, 80);
    assert.equal(all[0], 'person');
    assert.ok(all.includes('sports ball'));
  });

  test('basketball1.png: a person box on the player at the left', async () => {
    const out = await detector.detect(readFixture('basketball1.png'));
    assert.equal(out.width, 640);
    assert.equal(out.height, 480);
    // Measured by eye on the image: head top at y≈80, feet at the bottom edge, x from the
    // left shoulder (≈35) to the hands holding the ball (≈165).
    const iou = bestMatch(out.detections, 'person', { x: 35, y: 80, width: 130, height: 400 });
    assert.ok(iou >= 0.6, `person box IoU ${iou.toFixed(2)}; got ${JSON.stringify(out.detections)}`);
    const person = out.detections.find((d) => d.label === 'person')!;
    assert.equal(person.external_id, 'coco:1');
    assert.ok(person.confidence >= 0.5 && person.confidence <= 1);
  });

  test('camera.png: a person box on the cameraman', async () => {
    const out = await detector.detect(readFixture('camera.png'));
    assert.deepEqual([out.width, out.height], [512, 512]);
    // The man spans from the left edge to the camera (x≈300), head top y≈60 to the bottom.
    const iou = bestMatch(out.detections, 'person', { x: 0, y: 60, width: 300, height: 452 });
    assert.ok(iou >= 0.6, `person box IoU ${iou.toFixed(2)}; got ${JSON.stringify(out.detections)}`);
  });

  test('squirrel_cls.jpg: nothing at or above the 0.3 threshold (COCO has no squirrel)', async () => {
    const out = await detector.detect(readFixture('squirrel_cls.jpg'));
    assert.deepEqual(out.detections, []);
    assert.deepEqual([out.width, out.height], [535, 426]);
  });

  test('every result is well formed: integer boxes inside the image, sorted by confidence', async () => {
    const out = await detector.detect(readFixture('basketball1.png'));
    assert.ok(out.detections.length > 0);
    let last = Infinity;
    for (const d of out.detections) {
      const b = d.bounding_box;
      for (const v of [b.x, b.y, b.width, b.height]) assert.ok(Number.isInteger(v), `${v} is an integer`);
      assert.ok(b.x >= 0 && b.y >= 0 && b.width > 0 && b.height > 0 && b.x + b.width <= 640 && b.y + b.height <= 480, JSON.stringify(b));
      assert.ok(d.confidence >= 0.3 && d.confidence <= last);
      last = d.confidence;
    }
    assert.ok(out.timings.decodeMs > 0 && out.timings.inferMs > 0 && out.timings.postprocessMs >= 0);
  });

  test('the same photo as JPEG, PNG, WebP, GIF and grayscale yields the same labels and nearly the same person box', async () => {
    const rgb = sharp(readFixture('camera.png')).toColourspace('srgb');
    const variants: Record<string, Buffer> = {
      jpeg: await rgb.clone().jpeg({ quality: 92 }).toBuffer(),
      png: await rgb.clone().png().toBuffer(),
      webp: await rgb.clone().webp({ quality: 92 }).toBuffer(),
      gif: await rgb.clone().gif().toBuffer(),
      grayscale: await sharp(readFixture('camera.png')).grayscale().jpeg({ quality: 92 }).toBuffer(),
    };
    const reference = await detector.detect(readFixture('camera.png'));
    const refPerson = reference.detections.find((d) => d.label === 'person')!;
    for (const [name, bytes] of Object.entries(variants)) {
      const out = await detector.detect(bytes);
      assert.deepEqual(labels(out.detections), labels(reference.detections), `${name}: ${JSON.stringify(out.detections)}`);
      const iou = bestMatch(out.detections, 'person', refPerson.bounding_box);
      assert.ok(iou > 0.9, `${name}: person box IoU with the original ${iou.toFixed(3)}`);
    }
  });

  test('EXIF orientation: a photo stored sideways is detected upright, boxes in the upright frame', async () => {
    // Stored rotated 90° counter-clockwise with orientation 6 (viewer rotates it back clockwise).
    const stored = await sharp(readFixture('basketball1.png')).rotate(-90).jpeg({ quality: 92 }).withMetadata({ orientation: 6 }).toBuffer();
    const out = await detector.detect(stored);
    assert.deepEqual([out.width, out.height], [640, 480]);
    const iou = bestMatch(out.detections, 'person', { x: 35, y: 80, width: 130, height: 400 });
    assert.ok(iou >= 0.6, `person box IoU ${iou.toFixed(2)}; got ${JSON.stringify(out.detections)}`);
  });

  test('a larger photo maps boxes back to its own pixels', async () => {
    const big = await sharp(readFixture('basketball1.png')).resize(1280, 960).png().toBuffer();
    const out = await detector.detect(big);
    assert.deepEqual([out.width, out.height], [1280, 960]);
    const iou = bestMatch(out.detections, 'person', { x: 70, y: 160, width: 260, height: 800 });
    assert.ok(iou >= 0.6, `person box IoU ${iou.toFixed(2)}; got ${JSON.stringify(out.detections)}`);
  });

  test('bad bytes give a clear error and the detector keeps working', async () => {
    const png = readFixture('basketball1.png');
    await assert.rejects(detector.detect(png.subarray(0, png.length / 2)), isImageError('IMAGE_DECODE_FAILED'));
    await assert.rejects(detector.detect(Buffer.alloc(0)), isImageError('UNSUPPORTED_IMAGE_FORMAT'));
    await assert.rejects(detector.detect(Buffer.from('GIF89a but then nothing useful')), isImageError('IMAGE_DECODE_FAILED'));
    await assert.rejects(detector.detect(Buffer.from('%PDF-1.7 not an image')), isImageError('UNSUPPORTED_IMAGE_FORMAT'));
    assert.ok((await detector.detect(readFixture('camera.png'))).detections.length > 0);
  });

  test('a header claiming 20000×20000 is IMAGE_TOO_LARGE (no decode attempted); the bare header alone is a clear error', async () => {
    const chunk = (type: string, data: Buffer): Buffer => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type), data])));
      return Buffer.concat([len, Buffer.from(type), data, crc]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(20000, 0);
    ihdr.writeUInt32BE(20000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const bomb = Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', Buffer.alloc(0)), chunk('IEND', Buffer.alloc(0))]);
    await assert.rejects(detector.detect(bomb), (err: unknown) => isImageError('IMAGE_TOO_LARGE')(err) && /20000×20000/.test((err as Error).message));
    // Cut right after IHDR, libpng cannot finish reading the header at all.
    await assert.rejects(detector.detect(Buffer.concat([signature, chunk('IHDR', ihdr)])), (err: unknown) => err instanceof ImageError && /PNG/.test(err.message));
  });

  test('a 1×1 image: a result, any box inside its single pixel', async () => {
    const one = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#808080' } }).png().toBuffer();
    // Every score kept, so that there are boxes to check (at the usual threshold a grey pixel has none).
    const config = testConfig();
    const keepAll = new Detector(backend, await readCatalog(config), { scoreThreshold: 0, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    const out = await keepAll.detect(one);
    assert.deepEqual([out.width, out.height], [1, 1]);
    assert.ok(out.detections.length > 0, 'boxes to check');
    for (const d of out.detections) assert.deepEqual(d.bounding_box, { x: 0, y: 0, width: 1, height: 1 });
  });

  test('an expired deadline or an aborted signal stops the detection', async () => {
    await assert.rejects(detector.detect(readFixture('camera.png'), { deadline: Date.now() - 1 }), (e: unknown) => e instanceof InferenceError && e.code === 'DEADLINE_EXCEEDED');
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(detector.detect(readFixture('camera.png'), { signal: controller.signal }), (e: unknown) => e instanceof InferenceError && e.code === 'CANCELLED');
  });

  test('concurrent detections all complete with the same answers as one at a time', async () => {
    const images = [readFixture('basketball1.png'), readFixture('camera.png'), readFixture('squirrel_cls.jpg')];
    const alone: Detection[][] = [];
    for (const img of images) alone.push((await detector.detect(img)).detections);
    const together = await Promise.all([...images, ...images].map((img) => detector.detect(img)));
    together.forEach((out, i) => assert.deepEqual(out.detections, alone[i % 3]));
  });
});
