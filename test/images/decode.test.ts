import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { decodeToRgb, decodeToRgbBytes, enlargeBytesInto, enlargeInto, readImageHeader } from '../../src/images/decode.js';
import { ImageError } from '../../src/images/errors.js';
import { readFixture } from '../helpers/fixtures.js';

const LIMITS = { maxPixels: 40_000_000 };

async function rejectsWith(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ImageError, `expected ImageError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

/** A PNG whose header claims width×height; the pixel data is one empty IDAT. */
function pngHeader(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', Buffer.alloc(0)), chunk('IEND', Buffer.alloc(0))]);
}

/** A real small JPEG whose SOF0 frame header is rewritten to claim width×height. */
async function jpegClaiming(width: number, height: number): Promise<Buffer> {
  const jpeg = Buffer.from(await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } }).jpeg().toBuffer());
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
  assert.ok(sof > 0, 'baseline JPEG has a SOF0 marker');
  jpeg.writeUInt16BE(height, sof + 5);
  jpeg.writeUInt16BE(width, sof + 7);
  return jpeg;
}

function pixel(rgb: Float32Array, width: number, x: number, y: number): number[] {
  const o = (y * width + x) * 3;
  return [rgb[o], rgb[o + 1], rgb[o + 2]].map(Math.round);
}

describe('readImageHeader', () => {
  test('reads format and size of the fixtures', async () => {
    assert.deepEqual(await readImageHeader(readFixture('basketball1.png'), LIMITS), { format: 'png', width: 640, height: 480 });
    assert.deepEqual(await readImageHeader(readFixture('squirrel_cls.jpg'), LIMITS), { format: 'jpeg', width: 535, height: 426 });
  });

  test('a PNG header claiming 20000×20000 is refused as too large, from the header alone', async () => {
    await rejectsWith(readImageHeader(pngHeader(20000, 20000), LIMITS), 'IMAGE_TOO_LARGE', /20000×20000 \(400\.0 MP\); the limit is 40\.0 MP/);
  });

  test('a JPEG header claiming 20000×20000 is refused as too large', async () => {
    await rejectsWith(readImageHeader(await jpegClaiming(20000, 20000), LIMITS), 'IMAGE_TOO_LARGE', /20000×20000/);
  });

  test('the limit is the configured one', async () => {
    await rejectsWith(readImageHeader(readFixture('basketball1.png'), { maxPixels: 640 * 480 - 1 }), 'IMAGE_TOO_LARGE', /640×480/);
    assert.equal((await readImageHeader(readFixture('basketball1.png'), { maxPixels: 640 * 480 })).width, 640);
  });

  test('zero bytes, unknown formats and SVG are unsupported', async () => {
    await rejectsWith(readImageHeader(Buffer.alloc(0), LIMITS), 'UNSUPPORTED_IMAGE_FORMAT', /empty \(0 bytes\)/);
    await rejectsWith(readImageHeader(Buffer.from('hello, not an image'), LIMITS), 'UNSUPPORTED_IMAGE_FORMAT', /JPEG, PNG, WebP or GIF/);
    await rejectsWith(readImageHeader(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'), LIMITS), 'UNSUPPORTED_IMAGE_FORMAT', /expected JPEG/);
    const tiff = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).tiff().toBuffer();
    await rejectsWith(readImageHeader(tiff, LIMITS), 'UNSUPPORTED_IMAGE_FORMAT', /expected JPEG/);
  });

  test('a header cut short or magic bytes followed by junk cannot be read', async () => {
    await rejectsWith(readImageHeader(readFixture('basketball1.png').subarray(0, 20), LIMITS), 'IMAGE_DECODE_FAILED', /cannot read the PNG header/);
    await rejectsWith(readImageHeader(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(500, 7)]), LIMITS), 'IMAGE_DECODE_FAILED', /JPEG/);
  });

  test('EXIF orientation 6 swaps width and height', async () => {
    const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#000' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    assert.deepEqual(await readImageHeader(rotated, LIMITS), { format: 'jpeg', width: 20, height: 40 });
  });
});

describe('decodeToRgb', () => {
  const layout = (width: number, height: number) => ({ width, height, contentWidth: width, contentHeight: height });

  async function decode(bytes: Buffer, width = 8, height = 8, limits = LIMITS): Promise<Float32Array> {
    const header = await readImageHeader(bytes, limits);
    return decodeToRgb(bytes, header, layout(width, height), limits);
  }

  test('produces an NHWC float RGB raster of the requested size with values 0–255', async () => {
    const rgb = await decode(readFixture('squirrel_cls.jpg'), 512, 512);
    assert.equal(rgb.length, 512 * 512 * 3);
    let min = Infinity;
    let max = -Infinity;
    for (const v of rgb) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    assert.ok(min >= 0 && max <= 255 && max > 200, `range ${min}..${max}`);
  });

  test('grayscale becomes three equal channels', async () => {
    const rgb = await decode(readFixture('camera.png'), 16, 16);
    for (let i = 0; i < rgb.length; i += 3) assert.ok(rgb[i] === rgb[i + 1] && rgb[i] === rgb[i + 2]);
  });

  test('transparency is flattened onto white', async () => {
    const transparent = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    assert.deepEqual(pixel(await decode(transparent), 8, 3, 3), [255, 255, 255]);
    const halfRed = await sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 0.5 } } }).webp({ lossless: true }).toBuffer();
    const [r, g, b] = pixel(await decode(halfRed), 8, 3, 3);
    assert.equal(r, 255);
    assert.ok(g > 100 && g < 156 && g === b, `half-transparent red on white is pink, got ${r},${g},${b}`);
  });

  test('16-bit PNG decodes to the same 0–255 range', async () => {
    const deep = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 255, g: 128, b: 0 } } }).toColourspace('rgb16').png().toBuffer();
    assert.deepEqual(pixel(await decode(deep), 8, 1, 1), [255, 128, 0]);
  });

  test('EXIF orientation is applied: the left half of the stored image becomes the top', async () => {
    const left = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const stored = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#0000ff' } })
      .composite([{ input: left, left: 0, top: 0 }])
      .jpeg({ quality: 95 })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const rgb = await decode(stored, 20, 40);
    const top = pixel(rgb, 20, 10, 5);
    const bottom = pixel(rgb, 20, 10, 35);
    assert.ok(top[0] > 200 && top[2] < 60, `top should be red, got ${top}`);
    assert.ok(bottom[2] > 200 && bottom[0] < 60, `bottom should be blue, got ${bottom}`);
  });

  test('only the first frame of an animated GIF is used', async () => {
    const red = await sharp({ create: { width: 6, height: 6, channels: 3, background: '#ff0000' } }).raw().toBuffer();
    const blue = await sharp({ create: { width: 6, height: 6, channels: 3, background: '#0000ff' } }).raw().toBuffer();
    const gif = await sharp(Buffer.concat([red, blue]), { raw: { width: 6, height: 12, channels: 3, pageHeight: 6 } }).gif().toBuffer();
    assert.deepEqual(await readImageHeader(gif, LIMITS), { format: 'gif', width: 6, height: 6 });
    const [r, , b] = pixel(await decode(gif, 6, 6), 6, 3, 3);
    assert.ok(r > 200 && b < 60, `first frame is red, got r=${r} b=${b}`);
  });

  test('letterbox layout pads right and bottom with black', async () => {
    const white = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const header = await readImageHeader(white, LIMITS);
    const rgb = await decodeToRgb(white, header, { width: 20, height: 20, contentWidth: 20, contentHeight: 10 }, LIMITS);
    assert.deepEqual(pixel(rgb, 20, 10, 5), [255, 255, 255]);
    assert.deepEqual(pixel(rgb, 20, 10, 15), [0, 0, 0]);
  });

  test('into a reused buffer: every value is rewritten, the padding cleared, the same raster as a new one', async () => {
    const white = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#ffffff' } }).png().toBuffer();
    const header = await readImageHeader(white, LIMITS);
    const layout = { width: 20, height: 20, contentWidth: 20, contentHeight: 10 };
    const fresh = await decodeToRgb(white, header, layout, LIMITS);
    const dirty = new Float32Array(20 * 20 * 3).fill(123);
    const reused = await decodeToRgb(white, header, layout, LIMITS, dirty);
    assert.equal(reused, dirty, 'written into the given buffer');
    assert.deepEqual([...reused], [...fresh]);
    await assert.rejects(decodeToRgb(white, header, layout, LIMITS, new Float32Array(10)), /holds 10 values, the layout needs 1200/);
  });

  test('a 1×1 image decodes (upscaled)', async () => {
    const one = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#336699' } }).png().toBuffer();
    assert.deepEqual(pixel(await decode(one, 512, 512), 512, 500, 500), [0x33, 0x66, 0x99]);
  });

  test('truncated JPEG and PNG data is a decode error, not a crash or a grey image', async () => {
    const jpeg = readFixture('squirrel_cls.jpg');
    await rejectsWith(decode(jpeg.subarray(0, Math.floor(jpeg.length / 2))), 'IMAGE_DECODE_FAILED', /JPEG image is truncated or corrupt/);
    const png = readFixture('basketball1.png');
    await rejectsWith(decode(png.subarray(0, 5000)), 'IMAGE_DECODE_FAILED', /PNG image is truncated or corrupt/);
  });

  test('corrupt JPEG tables and corrupt PNG data are decode errors', async () => {
    const jpeg = Buffer.from(readFixture('squirrel_cls.jpg'));
    const sos = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    for (let i = 300; i < sos; i += 7) jpeg[i] = (jpeg[i] * 31 + 17) & 0xff; // quantisation/Huffman tables
    await rejectsWith(decode(jpeg), 'IMAGE_DECODE_FAILED', /JPEG/);
    const png = Buffer.from(readFixture('basketball1.png'));
    for (let i = 2000; i < png.length - 20; i += 7) png[i] = (png[i] * 31 + 17) & 0xff; // IDAT: CRC and zlib fail
    await rejectsWith(decode(png), 'IMAGE_DECODE_FAILED', /PNG image is truncated or corrupt/);
  });

  test('scrambled JPEG scan data still decodes (libjpeg only warns): garbage in, an image out, no crash', async () => {
    const jpeg = Buffer.from(readFixture('squirrel_cls.jpg'));
    const sos = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    for (let i = sos + 200; i < jpeg.length - 2; i += 7) jpeg[i] = (jpeg[i] * 31 + 17) & 0xff;
    assert.equal((await decode(jpeg)).length, 8 * 8 * 3);
  });

  test('a libjpeg warning (extraneous bytes before a marker) does not refuse the image', async () => {
    const jpeg = readFixture('squirrel_cls.jpg');
    const eoi = jpeg.lastIndexOf(Buffer.from([0xff, 0xd9]));
    const noisy = Buffer.concat([jpeg.subarray(0, eoi), Buffer.from([1, 2, 3]), jpeg.subarray(eoi)]);
    assert.equal((await decode(noisy)).length, 8 * 8 * 3);
  });

  test('the decoder enforces the pixel limit itself too', async () => {
    const bytes = readFixture('basketball1.png');
    const header = await readImageHeader(bytes, LIMITS);
    await rejectsWith(decodeToRgb(bytes, header, layout(8, 8), { maxPixels: 1000 }), 'IMAGE_TOO_LARGE', /more than 0\.0 MP/);
  });
});

describe('enlargeInto', () => {
  /** Catmull-Rom weights, as libvips' bicubic interpolator. */
  function weights(t: number): number[] {
    return [(-t * t * t + 2 * t * t - t) / 2, (3 * t * t * t - 5 * t * t + 2) / 2, (-3 * t * t * t + 4 * t * t + t) / 2, (t * t * t - t * t) / 2];
  }

  test('enlarging the height only: bicubic down each column with centred samples, clamped to 0–255', () => {
    // 2 pixels wide, 3 tall → 2 × 7 content inside a 3 × 8 raster.
    const src = new Uint8Array([0, 0, 0, 255, 255, 255, 250, 10, 128, 5, 200, 60, 40, 40, 40, 90, 180, 30]);
    const out = enlargeInto(src, 2, 3, { width: 3, height: 8, contentWidth: 2, contentHeight: 7 });
    for (let y = 0; y < 8; y++) {
      for (let x = 0; x < 3; x++) {
        for (let c = 0; c < 3; c++) {
          let want = 0;
          if (x < 2 && y < 7) {
            const s = ((y + 0.5) * 3) / 7 - 0.5;
            const base = Math.floor(s);
            const w = weights(s - base);
            want = w.reduce((sum, wi, k) => sum + wi * src[(Math.min(2, Math.max(0, base - 1 + k)) * 2 + x) * 3 + c], 0);
            want = Math.min(255, Math.max(0, want));
          }
          const got = out[(y * 3 + x) * 3 + c];
          assert.ok(Math.abs(got - want) < 1e-3, `(${x},${y},${c}): ${got} vs ${want}`);
        }
      }
    }
  });

  test('enlarging both axes reproduces a linear ramp exactly away from the edges', () => {
    // p(x, y) = 10x + 20y (+ channel): cubic interpolation of a linear function is that function.
    const [sw, sh] = [6, 5];
    const src = new Uint8Array(sw * sh * 3);
    for (let y = 0; y < sh; y++) for (let x = 0; x < sw; x++) for (let c = 0; c < 3; c++) src[(y * sw + x) * 3 + c] = 10 * x + 20 * y + c;
    const [cw, ch] = [15, 11];
    const out = enlargeInto(src, sw, sh, { width: 16, height: 12, contentWidth: cw, contentHeight: ch });
    for (let y = 0; y < 12; y++) {
      for (let x = 0; x < 16; x++) {
        const sx = ((x + 0.5) * sw) / cw - 0.5;
        const sy = ((y + 0.5) * sh) / ch - 0.5;
        const got = out[(y * 16 + x) * 3 + 1];
        if (x >= cw || y >= ch) assert.equal(got, 0, 'padding is black');
        else if (sx >= 1 && sx <= sw - 2 && sy >= 1 && sy <= sh - 2) assert.ok(Math.abs(got - (10 * sx + 20 * sy + 1)) < 1e-3, `(${x},${y}): ${got}`);
      }
    }
  });

  test('an axis that keeps its size is copied exactly', () => {
    const src = new Uint8Array(Array.from({ length: 4 * 2 * 3 }, (_, i) => i * 10));
    const out = enlargeInto(src, 4, 2, { width: 4, height: 2, contentWidth: 4, contentHeight: 2 });
    assert.deepEqual([...out], [...src]);
  });
});

describe('UINT8 rasters (models that take pixels as bytes)', () => {
  const LIMITS_U8 = { maxPixels: 40_000_000 };

  test('a photo shrunk on both axes: libvips\' buffer is the raster, byte for byte the float raster\'s values', async () => {
    const bytes = readFixture('squirrel_cls.jpg'); // 535×426 → 256×256 shrinks both axes
    const header = await readImageHeader(bytes, LIMITS_U8);
    const layout = { width: 256, height: 256, contentWidth: 256, contentHeight: 256 };
    const u8 = await decodeToRgbBytes(bytes, header, layout, LIMITS_U8, new Uint8Array(256 * 256 * 3));
    const f32 = await decodeToRgb(bytes, header, layout, LIMITS_U8);
    assert.ok(Buffer.isBuffer(u8), 'libvips\' own output, not a copy into the given raster');
    assert.equal(u8.byteLength, 256 * 256 * 3);
    assert.deepEqual(Float32Array.from(u8), f32);
  });

  test('enlarging (a 640×480 photo to 512×512 enlarges the height): the float raster rounded to bytes, padding black', async () => {
    const bytes = readFixture('basketball1.png');
    const header = await readImageHeader(bytes, LIMITS_U8);
    for (const layout of [
      { width: 512, height: 512, contentWidth: 512, contentHeight: 512 },
      { width: 512, height: 512, contentWidth: 512, contentHeight: 384, offsetY: 64 },
    ]) {
      const into = new Uint8Array(512 * 512 * 3).fill(77); // a reused raster: everything is rewritten
      const u8 = await decodeToRgbBytes(bytes, header, layout, LIMITS_U8, into);
      const f32 = await decodeToRgb(bytes, header, layout, LIMITS_U8);
      assert.equal(u8, into);
      let worst = 0;
      for (let i = 0; i < f32.length; i++) worst = Math.max(worst, Math.abs(u8[i] - f32[i]));
      assert.ok(worst <= 0.5, `each byte is its float rounded (worst ${worst})`);
    }
  });

  test('enlargeBytesInto: both axes and one axis, the same interpolation as enlargeInto, rounded and clamped', () => {
    const src = new Uint8Array([0, 0, 0, 255, 255, 255, 250, 10, 128, 5, 200, 60, 40, 40, 40, 90, 180, 30]);
    for (const layout of [
      { width: 3, height: 8, contentWidth: 2, contentHeight: 7 },
      { width: 5, height: 8, contentWidth: 5, contentHeight: 7 },
      { width: 5, height: 3, contentWidth: 4, contentHeight: 3, offsetX: 1 },
    ]) {
      const f32 = enlargeInto(src, 2, 3, layout);
      const u8 = enlargeBytesInto(src, 2, 3, layout);
      assert.deepEqual(Array.from(u8), Array.from(f32, (v) => Math.min(255, Math.max(0, Math.round(v)))).map((v, i) => (Math.abs(f32[i] - Math.trunc(f32[i]) - 0.5) < 1e-9 ? u8[i] : v)), JSON.stringify(layout));
    }
  });
});
