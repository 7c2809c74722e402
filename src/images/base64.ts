/**
 * Base64 image intake: an optional data-URI prefix, strict validation, one decode, a magic-byte sniff.
 *
 * Decisions (see docs/images.md):
 * - The prefix's media type is ignored; the format comes from the bytes.
 * - Only the standard alphabet (RFC 4648 §4) with optional "=" padding; ASCII whitespace (space,
 *   tab, CR, LF) is tolerated anywhere because line-wrapped base64 (76 columns) is common.
 * - The size limit counts every character after the prefix, whitespace included, and is checked
 *   before anything else so an oversized body costs no work.
 */
import { ImageError } from './errors.js';
import { MIME_BY_FORMAT, sniffImageFormat } from './sniff.js';
import type { IntakeImage } from './types.js';

/** A data-URI header longer than this is not a header we accept (media types are short). */
const MAX_PREFIX_CHARS = 256;

const SUPPORTED = 'JPEG, PNG, WebP or GIF';

function invalid(message: string): ImageError {
  return new ImageError('INVALID_IMAGE_BASE64', message);
}

/** Returns where the base64 payload starts: 0, or just after a `data:<mime>;base64,` prefix. */
function payloadStart(input: string): number {
  if (!/^data:/i.test(input)) return 0;
  const comma = input.indexOf(',');
  if (comma < 0 || comma > MAX_PREFIX_CHARS) {
    throw invalid('image_base64 starts with "data:" but has no "data:<mime>;base64," prefix');
  }
  const header = input.slice(5, comma);
  if (!/;base64$/i.test(header)) {
    throw invalid('image_base64 data URI must be base64-encoded: "data:<mime>;base64,<data>"');
  }
  return comma + 1;
}

function describeChar(code: number): string {
  return code >= 0x21 && code <= 0x7e ? `"${String.fromCharCode(code)}"` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * One pass over the payload: every character is from the alphabet, whitespace, or trailing padding,
 * and the number of data characters can form whole bytes. Throws INVALID_IMAGE_BASE64 otherwise.
 */
function checkBase64(input: string, start: number): void {
  let data = 0;
  let padding = 0;
  for (let i = start; i < input.length; i++) {
    const c = input.charCodeAt(i);
    const isAlphabet =
      (c >= 0x41 && c <= 0x5a) || // A-Z
      (c >= 0x61 && c <= 0x7a) || // a-z
      (c >= 0x30 && c <= 0x39) || // 0-9
      c === 0x2b || // +
      c === 0x2f; // /
    if (isAlphabet) {
      if (padding > 0) throw invalid(`image_base64 has data after "=" padding (at character ${i - start})`);
      data++;
    } else if (c === 0x3d) {
      // =
      if (++padding > 2) throw invalid('image_base64 has more than two "=" padding characters');
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      continue;
    } else {
      const hint = c === 0x2d || c === 0x5f ? ' (base64url is not accepted; use the standard alphabet with "+" and "/")' : '';
      throw invalid(`image_base64 is not valid base64: character ${describeChar(c)} at position ${i - start}${hint}`);
    }
  }
  if (data === 0) throw invalid('image_base64 contains no data');
  if (padding > 0 ? (data + padding) % 4 !== 0 : data % 4 === 1) {
    throw invalid('image_base64 is not valid base64: its length does not encode whole bytes (truncated?)');
  }
}

function isCanonicalEncoding(payload: string, bytes: Buffer): boolean {
  const canonical = bytes.toString('base64');
  return payload === canonical || payload === canonical.replace(/=+$/, '');
}

/**
 * Decodes a base64 image (optionally a data URI) whose payload is at most maxEncodedBytes characters.
 * Throws ImageError INVALID_IMAGE_BASE64, IMAGE_TOO_LARGE or UNSUPPORTED_IMAGE_FORMAT.
 */
export function decodeBase64Image(input: string, maxEncodedBytes: number): IntakeImage {
  if (typeof input !== 'string') throw invalid('image_base64 must be a string');
  const start = payloadStart(input);
  const encodedLength = input.length - start;
  if (encodedLength > maxEncodedBytes) {
    throw new ImageError(
      'IMAGE_TOO_LARGE',
      `image_base64 is ${encodedLength} characters; the limit is ${maxEncodedBytes} (without the data-URI prefix)`,
    );
  }
  if (encodedLength === 0) throw invalid('image_base64 contains no data');
  const payload = start === 0 ? input : input.slice(start);
  // The one decode. Node's decoder skips characters outside the alphabet, so the bytes alone prove
  // nothing; re-encoding them and finding the payload again does (and costs far less than a
  // character loop over 10 MB). Anything else (whitespace, missing padding, bad characters) takes
  // the precise check, which also names the bad character.
  const bytes = Buffer.from(payload, 'base64');
  if (!isCanonicalEncoding(payload, bytes)) checkBase64(input, start);
  const format = sniffImageFormat(bytes);
  if (format === null) {
    throw new ImageError('UNSUPPORTED_IMAGE_FORMAT', `image_base64 is not a ${SUPPORTED} image (checked by its first bytes)`);
  }
  return { bytes, format, mime: MIME_BY_FORMAT[format] };
}
