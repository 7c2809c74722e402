import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sniffImageFormat } from '../../src/images/sniff.js';
import { readFixture } from '../helpers/fixtures.js';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

test('the shared fixtures are recognised', () => {
  assert.equal(sniffImageFormat(readFixture('camera.png')), 'png');
  assert.equal(sniffImageFormat(readFixture('basketball1.png')), 'png');
  assert.equal(sniffImageFormat(readFixture('squirrel_cls.jpg')), 'jpeg');
});

test('each format by its magic bytes', () => {
  assert.equal(sniffImageFormat(bytes([0xff, 0xd8, 0xff, 0xe0])), 'jpeg');
  assert.equal(sniffImageFormat(bytes([0x89], 'PNG\r\n\x1a\n')), 'png');
  assert.equal(sniffImageFormat(bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 ')), 'webp');
  assert.equal(sniffImageFormat(bytes('GIF87a', [1, 0, 1, 0])), 'gif');
  assert.equal(sniffImageFormat(bytes('GIF89a', [1, 0, 1, 0])), 'gif');
});

test('near misses and other formats are refused', () => {
  const refused: Array<[string, Buffer]> = [
    ['empty', Buffer.alloc(0)],
    ['JPEG SOI without a marker', bytes([0xff, 0xd8, 0x00])],
    ['truncated PNG signature', bytes([0x89], 'PNG\r\n')],
    ['PNG signature with LF/CRLF damage', bytes([0x89], 'PNG\n\n\x1a\n')],
    ['RIFF but WAVE', bytes('RIFF', [0, 0, 0, 0], 'WAVEfmt ')],
    ['RIFF too short for WEBP', bytes('RIFF', [0, 0, 0, 0], 'WEB')],
    ['GIF88a', bytes('GIF88a')],
    ['BMP', bytes('BM', [0, 0, 0, 0])],
    ['TIFF', bytes('II*', [0])],
    ['PDF', bytes('%PDF-1.7')],
    ['HTML', bytes('<!doctype html>')],
  ];
  for (const [name, b] of refused) assert.equal(sniffImageFormat(b), null, name);
});

test('accepts a plain Uint8Array', () => {
  assert.equal(sniffImageFormat(new Uint8Array([0xff, 0xd8, 0xff, 0xdb])), 'jpeg');
});
