/**
 * The tier bench's photos: five real photos of the sizes people send (a 1280×720 frame, a
 * phone portrait, a large landscape, a small web image, a 512×480 JPEG). The repository
 * holds no real photo above 902×770, so the large ones are made from its real photos by
 * sharp (cover-resized, JPEG quality 90, 4:2:0: what a camera or phone writes); the small
 * ones are real files as they are or scaled down. BENCH_TIER_PHOTOS=<dir> uses every
 * JPEG/PNG/WebP in a directory of your own instead.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { FIXTURE_IMAGES, REPO_ROOT } from '../../test/helpers/fixtures.js';

export interface Photo {
  name: string;
  file: string;
  bytes: Buffer;
  width: number;
  height: number;
  /** Where it came from and what was done to it. */
  origin: string;
}

const LABELLED = path.join(REPO_ROOT, 'datasets/labelled-photos/images');

/** name, source, target size (none: the file as it is). */
const SET: Array<{ name: string; source: string; size?: [number, number] }> = [
  { name: 'frame-1280x720.jpg', source: path.join(FIXTURE_IMAGES, 'basketball1.png'), size: [1280, 720] },
  { name: 'portrait-810x1080.jpg', source: path.join(LABELLED, 'matplotlib-grace-hopper.jpg'), size: [810, 1080] },
  { name: 'large-1600x1000.jpg', source: path.join(LABELLED, 'opencv-ela_original.jpg'), size: [1600, 1000] },
  { name: 'small-548x342.jpg', source: path.join(LABELLED, 'skimage-coffee.png'), size: [548, 342] },
  { name: 'opencv-fruits-512x480.jpg', source: path.join(LABELLED, 'opencv-fruits.jpg') },
];

/** Writes the set into `dir` (the load generators read the files) and returns it. */
export async function tierPhotos(dir: string): Promise<Photo[]> {
  const own = process.env.BENCH_TIER_PHOTOS;
  if (own) {
    const files = (await readdir(own)).filter((f) => /\.(jpe?g|png|webp)$/i.test(f)).sort();
    if (files.length === 0) throw new Error(`BENCH_TIER_PHOTOS=${own}: no JPEG, PNG or WebP file`);
    return Promise.all(files.map(async (f) => describe(f, path.join(own, f), await readFile(path.join(own, f)), 'BENCH_TIER_PHOTOS')));
  }
  await mkdir(dir, { recursive: true });
  return Promise.all(
    SET.map(async ({ name, source, size }) => {
      const input = await readFile(source);
      const meta = await sharp(input).metadata();
      const bytes = size ? await sharp(input).resize(size[0], size[1], { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer() : input;
      const how = size ? `${size[0] > (meta.width ?? 0) ? 'scaled up' : 'scaled down'} from` : 'as is:';
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      return describe(name, file, bytes, `${how} ${path.relative(REPO_ROOT, source)} (${meta.width}×${meta.height})`);
    }),
  );
}

async function describe(name: string, file: string, bytes: Buffer, origin: string): Promise<Photo> {
  const { width = 0, height = 0 } = await sharp(bytes).metadata();
  return { name, file, bytes, width, height, origin };
}
