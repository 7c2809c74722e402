import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeBase64Image } from '../../src/images/base64.js';
import { ImageError, type ImageErrorCode } from '../../src/images/errors.js';
import { readFixture } from '../helpers/fixtures.js';

const MB10 = 10 * 1024 * 1024;
const png = readFixture('camera.png');
const jpg = readFixture('squirrel_cls.jpg');

function fails(code: ImageErrorCode, message?: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof ImageError, `expected an ImageError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return true;
  };
}

describe('decodeBase64Image', () => {
  test('plain base64 without a prefix', () => {
    const image = decodeBase64Image(png.toString('base64'), MB10);
    assert.deepEqual(image.bytes, png);
    assert.equal(image.format, 'png');
    assert.equal(image.mime, 'image/png');
  });

  test('with a data-URI prefix', () => {
    const image = decodeBase64Image(`data:image/jpeg;base64,${jpg.toString('base64')}`, MB10);
    assert.deepEqual(image.bytes, jpg);
    assert.equal(image.format, 'jpeg');
  });

  test('the prefix is case-insensitive and may carry parameters', () => {
    assert.equal(decodeBase64Image(`DATA:image/png;name=a.png;BASE64,${png.toString('base64')}`, MB10).format, 'png');
    assert.equal(decodeBase64Image(`data:;base64,${png.toString('base64')}`, MB10).format, 'png');
  });

  test('a prefix lying about the type: the bytes decide', () => {
    const image = decodeBase64Image(`data:image/gif;base64,${png.toString('base64')}`, MB10);
    assert.equal(image.format, 'png');
    assert.equal(image.mime, 'image/png');
  });

  test('an image prefix on bytes that are no image is unsupported', () => {
    const text = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>').toString('base64');
    assert.throws(() => decodeBase64Image(`data:image/png;base64,${text}`, MB10), fails('UNSUPPORTED_IMAGE_FORMAT', /JPEG, PNG, WebP or GIF/));
  });

  test('wrong magic bytes are unsupported', () => {
    const bmp = Buffer.concat([Buffer.from('BM'), Buffer.alloc(64)]).toString('base64');
    assert.throws(() => decodeBase64Image(bmp, MB10), fails('UNSUPPORTED_IMAGE_FORMAT'));
  });

  test('unpadded base64 is accepted', () => {
    const b64 = png.subarray(0, 100).toString('base64');
    assert.ok(b64.endsWith('='), 'fixture slice chosen to need padding');
    assert.deepEqual(decodeBase64Image(b64.replace(/=+$/, ''), MB10).bytes, png.subarray(0, 100));
  });

  test('line-wrapped base64 (76 columns, CRLF) is accepted', () => {
    const wrapped = png.toString('base64').replace(/.{76}/g, '$&\r\n');
    assert.deepEqual(decodeBase64Image(wrapped, MB10).bytes, png);
  });

  const garbage: Array<[string, string, RegExp]> = [
    ['a character outside the alphabet', `${png.toString('base64').slice(0, 40)}*${png.toString('base64').slice(41)}`, /character "\*" at position 40/],
    ['base64url characters', png.toString('base64').replace(/\+/g, '-').replace(/\//g, '_'), /base64url is not accepted/],
    ['a non-ASCII character', `iVBORw0KGgo${'é'}AAAA`, /U\+00E9/],
    ['data after padding', 'iVBORw==iVBORw==', /after "=" padding/],
    ['three padding characters', 'iVBORw0KGg===', /more than two/],
    ['a truncated payload (length 4n+1)', 'iVBORw0KG', /whole bytes/],
    ['wrong padding length', 'iVBORw0KGgo==', /whole bytes/],
    ['an empty string', '', /no data/],
    ['only whitespace', ' \n\t ', /no data/],
    ['a prefix with nothing after it', 'data:image/png;base64,', /no data/],
    ['a data URI that is not base64', 'data:image/png,hello', /must be base64-encoded/],
    ['"data:" without a comma', 'data:image/png;base64', /no "data:<mime>;base64," prefix/],
    ['a JSON-ish value', '{"image": "x"}', /not valid base64/],
  ];
  for (const [name, input, message] of garbage) {
    test(`refuses ${name}`, () => {
      assert.throws(() => decodeBase64Image(input, MB10), fails('INVALID_IMAGE_BASE64', message));
    });
  }

  test('refuses a non-string', () => {
    assert.throws(() => decodeBase64Image(42 as unknown as string, MB10), fails('INVALID_IMAGE_BASE64'));
  });

  test('the size limit counts the payload without the prefix', () => {
    const b64 = png.toString('base64');
    const prefix = 'data:image/png;base64,';
    // Exactly at the limit: accepted even though the whole string is longer.
    assert.equal(decodeBase64Image(prefix + b64, b64.length).format, 'png');
    assert.throws(() => decodeBase64Image(prefix + b64, b64.length - 1), fails('IMAGE_TOO_LARGE', new RegExp(`${b64.length} characters; the limit is ${b64.length - 1}`)));
  });

  test('an oversized string is refused before validation (even if it is garbage)', () => {
    const huge = '*'.repeat(MB10 + 1);
    assert.throws(() => decodeBase64Image(huge, MB10), fails('IMAGE_TOO_LARGE'));
  });

  test('a 10 MB payload at the limit decodes', () => {
    const raw = Buffer.alloc(Math.floor((MB10 / 4) * 3));
    raw.set([0xff, 0xd8, 0xff, 0xe0]);
    const b64 = raw.toString('base64');
    assert.ok(b64.length <= MB10);
    const image = decodeBase64Image(b64, MB10);
    assert.equal(image.format, 'jpeg');
    assert.equal(image.bytes.length, raw.length);
  });
});
