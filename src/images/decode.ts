/**
 * Image decoding with sharp (libvips): magic-byte sniffing, a header-only size check
 * against decompression bombs, then one libvips pipeline that orients, flattens, converts
 * to sRGB, resizes and casts to float on a libuv thread, so the event loop and the
 * inference thread stay free while it runs.
 */
import sharp, { type Metadata, type OutputInfo } from 'sharp';
import { ImageError } from './errors.js';
import { sniffImageFormat } from './sniff.js';
import type { ImageFormat } from './types.js';

export interface ImageHeader {
  format: ImageFormat;
  /** Size after EXIF orientation: the image as a person sees it. */
  width: number;
  height: number;
}

/** Where the decoded image goes inside the output raster (top-left aligned). */
export interface RasterLayout {
  /** Output raster size (the model input). */
  width: number;
  height: number;
  /** Size the image is resized to; the rest, right and bottom, is black padding. */
  contentWidth: number;
  contentHeight: number;
}

export interface DecodeLimits {
  /** Most pixels (width × height) an image may have; checked on the header before decoding. */
  maxPixels: number;
}

/** A libvips operation that runs longer than this is a hostile or broken input. */
const DECODE_TIMEOUT_SECONDS = 20;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function megapixels(n: number): string {
  return `${(n / 1e6).toFixed(1)} MP`;
}

/**
 * Reads only the header: format, oriented size. Refuses unsupported formats and images
 * over the pixel limit before a single pixel is decoded.
 */
export async function readImageHeader(bytes: Uint8Array, limits: DecodeLimits): Promise<ImageHeader> {
  if (bytes.length === 0) throw new ImageError('UNSUPPORTED_IMAGE_FORMAT', 'the image is empty (0 bytes)');
  const format = sniffImageFormat(bytes);
  if (format === null) {
    throw new ImageError('UNSUPPORTED_IMAGE_FORMAT', 'unsupported image format: expected JPEG, PNG, WebP or GIF');
  }
  let meta: Metadata;
  try {
    meta = await sharp(asBuffer(bytes), { limitInputPixels: false, failOn: 'error' }).metadata();
  } catch (err) {
    throw new ImageError('IMAGE_DECODE_FAILED', `cannot read the ${format.toUpperCase()} header: ${reason(err)}`, undefined, { cause: err });
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  if (width < 1 || height < 1) {
    throw new ImageError('IMAGE_DECODE_FAILED', `the ${format.toUpperCase()} header has no valid size`);
  }
  const pixels = width * height;
  if (pixels > limits.maxPixels) {
    throw new ImageError('IMAGE_TOO_LARGE', `the image is ${width}×${height} (${megapixels(pixels)}); the limit is ${megapixels(limits.maxPixels)}`);
  }
  // Orientations 5–8 turn the image a quarter: width and height swap.
  const quarterTurn = (meta.orientation ?? 1) >= 5;
  return { format, width: quarterTurn ? height : width, height: quarterTurn ? width : height };
}

/**
 * Decodes to an NHWC float32 RGB raster (values 0–255) of layout.width × layout.height:
 * EXIF orientation applied, transparency flattened onto white (how the image is shown),
 * grayscale and CMYK converted to sRGB, first frame of an animation, resized to
 * contentWidth × contentHeight and padded right and bottom with black.
 */
export async function decodeToRgb(bytes: Uint8Array, header: ImageHeader, layout: RasterLayout, limits: DecodeLimits): Promise<Float32Array> {
  const padRight = layout.width - layout.contentWidth;
  const padBottom = layout.height - layout.contentHeight;
  let pipeline = sharp(asBuffer(bytes), {
    limitInputPixels: limits.maxPixels,
    // Truncated or corrupt pixel data is an error; libjpeg warnings (extraneous bytes) are not.
    failOn: 'error',
    pages: 1,
    page: 0,
  })
    .timeout({ seconds: DECODE_TIMEOUT_SECONDS })
    .autoOrient()
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .resize(layout.contentWidth, layout.contentHeight, { fit: 'fill', kernel: 'lanczos3' });
  if (padRight > 0 || padBottom > 0) {
    pipeline = pipeline.extend({ right: padRight, bottom: padBottom, background: { r: 0, g: 0, b: 0 } });
  }
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await pipeline.raw({ depth: 'float' }).toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw decodeError(err, header.format, limits);
  }
  const { data, info } = out;
  if (info.width !== layout.width || info.height !== layout.height || info.channels !== 3) {
    throw new ImageError('IMAGE_DECODE_FAILED', `decoding produced ${info.width}×${info.height}×${info.channels}, expected ${layout.width}×${layout.height}×3`);
  }
  // libvips hands back a fresh, aligned allocation; copy only if that ever changes.
  if (data.byteOffset % 4 === 0) return new Float32Array(data.buffer, data.byteOffset, data.byteLength / 4);
  return new Float32Array(new Uint8Array(data).buffer);
}

function decodeError(err: unknown, format: ImageFormat, limits: DecodeLimits): ImageError {
  const msg = reason(err);
  if (/pixel limit/i.test(msg)) {
    return new ImageError('IMAGE_TOO_LARGE', `the image has more than ${megapixels(limits.maxPixels)}`, undefined, { cause: err });
  }
  if (/timeout/i.test(msg)) {
    return new ImageError('IMAGE_DECODE_FAILED', `decoding the ${format.toUpperCase()} image took more than ${DECODE_TIMEOUT_SECONDS} s`, undefined, { cause: err });
  }
  return new ImageError('IMAGE_DECODE_FAILED', `the ${format.toUpperCase()} image is truncated or corrupt: ${msg}`, undefined, { cause: err });
}

function reason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.trim().split('\n')[0].replace(/[:\s]+$/, '') || 'unknown error';
}
