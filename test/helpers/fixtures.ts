/** The shared test images (../shared/fixtures/images beside the repo). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '../..');
export const FIXTURE_IMAGES = process.env.FIXTURE_IMAGES ?? path.resolve(REPO_ROOT, '../shared/fixtures/images');

export function fixturePath(name: 'basketball1.png' | 'camera.png' | 'squirrel_cls.jpg'): string {
  return path.join(FIXTURE_IMAGES, name);
}

export function readFixture(name: 'basketball1.png' | 'camera.png' | 'squirrel_cls.jpg'): Buffer {
  return readFileSync(fixturePath(name));
}
