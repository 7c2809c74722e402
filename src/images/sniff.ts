/** Image format detection from the first bytes (magic numbers), never from names or headers. */
import type { ImageFormat } from './types.js';

export const MIME_BY_FORMAT: Readonly<Record<ImageFormat, string>> = Object.freeze({
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
});

/** The number of leading bytes sniffImageFormat needs to decide. */
export const SNIFF_BYTES = 12;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[offset + i] !== prefix[i]) return false;
  }
  return true;
}

function ascii(text: string): number[] {
  return Array.from(text, (c) => c.charCodeAt(0));
}

const RIFF = ascii('RIFF');
const WEBP = ascii('WEBP');
const GIF87A = ascii('GIF87a');
const GIF89A = ascii('GIF89a');

/** JPEG, PNG, WebP or GIF by magic bytes; null for anything else (including too few bytes). */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | null {
  // JPEG: SOI marker followed by the start of another marker.
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, PNG_SIGNATURE)) return 'png';
  // WebP: a RIFF container ("RIFF" <size:4> "WEBP").
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return 'webp';
  if (startsWith(bytes, GIF87A) || startsWith(bytes, GIF89A)) return 'gif';
  return null;
}
