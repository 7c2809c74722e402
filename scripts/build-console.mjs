#!/usr/bin/env node
// Builds the console web app (web/console) into dist/console-web: one esbuild bundle,
// the page and the stylesheet. Run by `npm run build`; the service serves the result
// under /console. Usage: node scripts/build-console.mjs [outDir]
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'web/console');
const out = path.resolve(process.argv[2] ?? path.join(root, 'dist/console-web'));

await mkdir(out, { recursive: true });
await build({
  entryPoints: [path.join(src, 'src/main.ts')],
  outfile: path.join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const f of ['index.html', 'app.css', 'favicon.svg']) await copyFile(path.join(src, f), path.join(out, f));
console.log(`console: web app built into ${path.relative(root, out) || out}`);
