// The fixture images, read in the init context and base64-encoded once per VU, so the
// iterations measure the service and not the test's own encoding work.
import encoding from 'k6/encoding';
import { SharedArray } from 'k6/data';
import { FIXTURES_DIR, IMAGE_BASE_URL } from './config.js';

const FILES = [
  { name: 'basketball1.png', mime: 'image/png' },
  { name: 'camera.png', mime: 'image/png' },
  { name: 'squirrel_cls.jpg', mime: 'image/jpeg' },
];

function fixturePath(name) {
  // The runner passes an absolute directory; without it, the shared fixtures beside the repo.
  return FIXTURES_DIR !== '' ? `${FIXTURES_DIR}/${name}` : import.meta.resolve(`../../../shared/fixtures/images/${name}`);
}

/** [{ name, mime, bytes, base64, dataUri, url }] — url is where the runner's static server serves it. */
export const IMAGES = FILES.map((f) => {
  const bytes = open(fixturePath(f.name), 'b');
  const base64 = encoding.b64encode(bytes, 'std');
  return {
    name: f.name,
    mime: f.mime,
    bytes: bytes.byteLength,
    base64,
    dataUri: `data:${f.mime};base64,${base64}`,
    url: `${IMAGE_BASE_URL}/${f.name}`,
  };
});

/** The image both the API scenarios and the gRPC tensor use, so latencies compare like for like. */
export const REFERENCE_IMAGE = IMAGES[0];

/** A URL on the static server that answers 404: a batch entry that must fail alone. */
export const MISSING_IMAGE_URL = `${IMAGE_BASE_URL}/no-such-image.png`;

export function pick(list) {
  return list[Math.floor(Math.random() * list.length)];
}

/**
 * The workload scenario's generated images (load-tests/tools/workload-images.mjs writes them
 * and manifest.json into `dir`), base64-encoded once and shared by every VU (SharedArray): a
 * 10 MB string per VU would cost more memory than the test is worth. Returns
 * { spread, edge, refused, manifest }; each entry is the manifest's
 * { kind, name, format, width, height, bytes, base64_length, error_code? } plus base64.
 */
export function workloadImages(dir) {
  const manifest = JSON.parse(open(`${dir}/manifest.json`));
  const load = (kind) => new SharedArray(`workload-${kind}`, () => manifest.images
    .filter((i) => i.kind === kind)
    .map((i) => ({ ...i, base64: encoding.b64encode(open(`${dir}/${i.name}`, 'b'), 'std') })));
  return { spread: load('spread'), edge: load('edge'), refused: load('refused'), manifest };
}
