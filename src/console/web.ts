/**
 * The web app's files, built by `npm run build` (scripts/build-console.mjs) into
 * dist/console-web and served from memory under /console. No CDN, nothing fetched at
 * run time. A service started without the build answers 503 on /console with what to run.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../api/errors.js';

/** src/console or dist/console → <package>/dist/console-web */
export const DEFAULT_ASSETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/console-web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
const ASSETS = ['app.js', 'app.css', 'favicon.svg'];

async function load(dir: string): Promise<Map<string, Buffer> | null> {
  const files = new Map<string, Buffer>();
  try {
    for (const name of ['index.html', ...ASSETS]) files.set(name, await readFile(path.join(dir, name)));
  } catch {
    return null;
  }
  return files;
}

export async function webRoutes(app: FastifyInstance, options: { assetsDir: string }): Promise<void> {
  const files = await load(options.assetsDir);
  const missing = () => new ApiError('NOT_READY', `The console's web files are not built (${options.assetsDir}); run: npm run build`);
  const send = (name: string) => {
    const body = files?.get(name);
    if (!body) throw missing();
    return { body, type: TYPES[path.extname(name)] ?? 'application/octet-stream' };
  };
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    const f = send('index.html');
    return reply.type(f.type).header('Cache-Control', 'no-cache').send(f.body);
  });
  app.get('/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    if (!ASSETS.includes(name)) throw new ApiError('ROUTE_NOT_FOUND', `No console asset "${name}"`);
    const f = send(name);
    return reply.type(f.type).header('Cache-Control', 'no-cache').send(f.body);
  });
}
