// Makes the workload scenario's images from the fixture photos with sharp, at run time (big
// files are never committed): a spread of sizes in JPEG, PNG, WebP and GIF, the edges the
// service must still accept (a base64 just under the encoded-size limit, an image of exactly
// the pixel limit) and the ones it must refuse (just over each limit, and TIFF, which it does
// not read). Writes the files and manifest.json into <out dir>; skips the work when a
// manifest for the same limits is already there.
//   node load-tests/tools/workload-images.mjs <fixtures dir> <out dir>
//   env: IMAGE_MAX_BASE64_BYTES (10 MiB), IMAGE_MAX_PIXELS (40000000): the deployment's limits
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

const VERSION = 1;
const MAX_BASE64 = Number(process.env.IMAGE_MAX_BASE64_BYTES || 10 * 1024 * 1024);
const MAX_PIXELS = Number(process.env.IMAGE_MAX_PIXELS || 40_000_000);

/** Raw bytes whose standard base64 is exactly `chars` long (chars a multiple of 4). */
const rawBytesFor = (chars) => (chars / 4) * 3;
const base64Length = (bytes) => 4 * Math.ceil(bytes / 3);

/**
 * Grows a JPEG to exactly `size` bytes with comment (COM) segments after SOI: still a valid
 * JPEG every decoder reads, so the encoded-size edge is hit to the byte.
 */
function padJpeg(jpeg, size) {
  let missing = size - jpeg.length;
  if (missing < 0) throw new Error(`the JPEG is already ${jpeg.length} bytes, above ${size}`);
  const segments = [];
  while (missing > 0) {
    let n = Math.min(missing, 65_537); // marker (2) + length (2) + up to 65533 bytes
    if (missing - n > 0 && missing - n < 4) n -= 4; // no remainder too short for a segment
    if (n < 4) throw new Error('cannot pad by fewer than 4 bytes');
    const seg = Buffer.alloc(n, 0x20);
    seg[0] = 0xff;
    seg[1] = 0xfe;
    seg.writeUInt16BE(n - 2, 2);
    segments.push(seg);
    missing -= n;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

/** Film-grain noise over an upscaled photo: compresses like a real high-resolution photo, not like a smooth upscale. */
async function grainyPhoto(src, width, height) {
  const noise = Buffer.alloc(width * height * 3);
  randomFillSync(noise);
  for (let i = 0; i < noise.length; i++) noise[i] = 64 + (noise[i] >> 1);
  return sharp(src).resize(width, height, { fit: 'fill' })
    .composite([{ input: noise, raw: { width, height, channels: 3 }, blend: 'soft-light' }])
    .removeAlpha().raw().toBuffer()
    .then((pixels) => sharp(pixels, { raw: { width, height, channels: 3 } }));
}

/** The largest real JPEG at these dimensions (quality stepped down) that fits in `limit` bytes, padded to exactly `limit`. */
async function jpegOfSize(src, width, height, limit) {
  const photo = await grainyPhoto(src, width, height);
  for (let q = 97; q >= 60; q -= 2) {
    const jpeg = await photo.clone().jpeg({ quality: q }).toBuffer();
    if (jpeg.length <= limit) return padJpeg(jpeg, limit);
  }
  throw new Error(`no JPEG of ${width}×${height} fits in ${limit} bytes`);
}

async function main() {
  const [fixtures, out] = process.argv.slice(2);
  if (!fixtures || !out) {
    process.stderr.write('usage: workload-images.mjs <fixtures dir> <out dir>\n');
    process.exit(2);
  }
  const manifestPath = path.join(out, 'manifest.json');
  if (existsSync(manifestPath)) {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (m.version === VERSION && m.max_base64 === MAX_BASE64 && m.max_pixels === MAX_PIXELS) return;
  }
  mkdirSync(out, { recursive: true });
  const photo = path.join(fixtures, 'squirrel_cls.jpg');
  const court = path.join(fixtures, 'basketball1.png');
  const camera = path.join(fixtures, 'camera.png');

  // The edges: a base64 4 characters under the limit; exactly the pixel limit (a 8:5 frame).
  const under = rawBytesFor(Math.floor(MAX_BASE64 / 4) * 4 - 4);
  const over = rawBytesFor(Math.floor(MAX_BASE64 / 4) * 4 + 4);
  const edgeW = Math.floor(Math.sqrt((MAX_PIXELS * 8) / 5));
  const edgeH = Math.floor(MAX_PIXELS / edgeW);
  const largest = await jpegOfSize(photo, 4000, 3000, under);

  const images = [
    // The spread: small to large, every format the service reads.
    ['spread', 'squirrel-320.jpg', sharp(photo).resize(320).jpeg({ quality: 80 })],
    ['spread', 'camera-512.gif', sharp(camera).gif()],
    ['spread', 'court-640.webp', sharp(court).webp({ quality: 80 })],
    ['spread', 'court-1280.png', sharp(court).resize(1280).png()],
    ['spread', 'squirrel-1920.jpg', sharp(photo).resize(1920).jpeg({ quality: 85 })],
    ['spread', 'camera-1024.webp', sharp(camera).resize(1024).webp({ quality: 85 })],
    ['spread', 'court-4000.jpg', sharp(court).resize(4000).jpeg({ quality: 85 })],
    // Accepted at the limits.
    ['edge', 'edge-base64-limit.jpg', largest],
    ['edge', 'edge-pixel-limit.jpg', sharp(photo).resize(edgeW, edgeH, { fit: 'fill' }).jpeg({ quality: 80 })],
    // Refused: just over each limit, and a format the service does not read.
    ['refused', 'over-base64-limit.jpg', padJpeg(largest, over), 'IMAGE_TOO_LARGE'],
    ['refused', 'over-pixel-limit.jpg', sharp(photo).resize(edgeW, edgeH + 1, { fit: 'fill' }).jpeg({ quality: 30 }), 'IMAGE_TOO_LARGE'],
    ['refused', 'court.tiff', sharp(court).tiff(), 'UNSUPPORTED_IMAGE_FORMAT'],
  ];

  const manifest = { version: VERSION, max_base64: MAX_BASE64, max_pixels: MAX_PIXELS, images: [] };
  for (const [kind, name, image, errorCode] of images) {
    const bytes = Buffer.isBuffer(image) ? image : await image.toBuffer();
    writeFileSync(path.join(out, name), bytes);
    const meta = await sharp(bytes).metadata();
    manifest.images.push({
      kind, name, format: meta.format, width: meta.width, height: meta.height,
      bytes: bytes.length, base64_length: base64Length(bytes.length),
      ...(errorCode ? { error_code: errorCode } : {}),
    });
  }
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  for (const i of manifest.images) {
    process.stderr.write(`workload-images: ${i.kind.padEnd(8)} ${i.name.padEnd(24)} ${i.format.padEnd(5)} ${`${i.width}×${i.height}`.padStart(10)} ${String(i.bytes).padStart(9)} B (base64 ${i.base64_length})\n`);
  }
}

await main();
