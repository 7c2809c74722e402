/**
 * ImageStore on the local file system: <dir>/<id[0..2]>/<id[2..4]>/<id>.<ext>, the extension
 * keeping the mime type (one file per image, so a write is one atomic rename and the files open
 * in any viewer). Ids must be UUIDs, which also rules out path traversal.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ImageStore, OpenedImage } from './types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const EXTENSION_BY_MIME: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
};
const MIME_BY_EXTENSION = Object.fromEntries(Object.entries(EXTENSION_BY_MIME).map(([m, e]) => [e, m]));

export class InvalidImageIdError extends RangeError {
  override readonly name = 'InvalidImageIdError';
}

export function isImageId(id: string): boolean {
  return typeof id === 'string' && UUID.test(id);
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

export class LocalImageStore implements ImageStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = path.resolve(dir);
  }

  /** The directory an id's file lives in; throws InvalidImageIdError for anything but a UUID. */
  private shard(requestId: string): { dir: string; base: string } {
    if (!isImageId(requestId)) throw new InvalidImageIdError(`image id must be a UUID (got ${JSON.stringify(String(requestId).slice(0, 64))})`);
    const id = requestId.toLowerCase();
    return { dir: path.join(this.dir, id.slice(0, 2), id.slice(2, 4)), base: id };
  }

  async put(requestId: string, image: { bytes: Buffer; mime: string }): Promise<void> {
    const { dir, base } = this.shard(requestId);
    const ext = EXTENSION_BY_MIME[image.mime.toLowerCase()];
    if (ext === undefined) throw new TypeError(`cannot store an image of type "${image.mime}"`);
    await mkdir(dir, { recursive: true });
    const final = path.join(dir, `${base}.${ext}`);
    const temp = path.join(dir, `.${base}.${randomBytes(6).toString('hex')}.tmp`);
    const fh = await open(temp, 'wx', 0o640);
    try {
      await fh.writeFile(image.bytes);
      await fh.sync(); // the rename must not publish a file whose data is still in flight
    } finally {
      await fh.close();
    }
    try {
      await rename(temp, final);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    // A re-put with another type leaves no stale sibling that get() could pick instead. One
    // listing of the shard directory (a few files) finds them: removing each other name
    // blindly cost three lstat calls and three ENOENT errors on every write.
    const stale = (await readdir(dir)).filter((f) => f.startsWith(`${base}.`) && f !== `${base}.${ext}` && Object.hasOwn(MIME_BY_EXTENSION, f.slice(base.length + 1)));
    await Promise.all(stale.map((f) => rm(path.join(dir, f), { force: true })));
  }

  async get(requestId: string): Promise<{ bytes: Buffer; mime: string } | null> {
    const { dir, base } = this.shard(requestId);
    for (const [ext, mime] of Object.entries(MIME_BY_EXTENSION)) {
      try {
        return { bytes: await readFile(path.join(dir, `${base}.${ext}`)), mime };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return null;
  }

  async open(requestId: string): Promise<OpenedImage | null> {
    const { dir, base } = this.shard(requestId);
    for (const [ext, mime] of Object.entries(MIME_BY_EXTENSION)) {
      const file = path.join(dir, `${base}.${ext}`);
      try {
        const info = await stat(file);
        return { body: createReadStream(file), mime, size: info.size, lastModified: info.mtime };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return null;
  }

  async delete(requestId: string): Promise<void> {
    const { dir, base } = this.shard(requestId);
    await Promise.all(Object.keys(MIME_BY_EXTENSION).map((e) => rm(path.join(dir, `${base}.${e}`), { force: true })));
  }
}
