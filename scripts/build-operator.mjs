#!/usr/bin/env node
// Bundles the Kubernetes operator (src/cli/operator-main.ts) into one file,
// dist/operator/operator.js, for the small operator image (operator.Dockerfile): the
// operator's own import graph only, no node_modules at run time. Fails when a package
// of the API's (native or heavy) gets into the bundle.
// Usage: node scripts/build-operator.mjs [outFile]
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.resolve(process.argv[2] ?? path.join(root, 'dist/operator/operator.js'));

const result = await build({
  entryPoints: [path.join(root, 'src/cli/operator-main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: ['node24'],
  // Some CommonJS dependencies call require() for Node's built-ins: an ESM bundle has no
  // require, so it gets one made from its own URL.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  // tr46 (under node-fetch, under the Kubernetes client) requires Node's deprecated
  // built-in punycode, which prints a warning at start: the userland package, same API.
  alias: { punycode: 'punycode/punycode.js' },
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});

const forbidden = /node_modules\/(onnxruntime-[a-z]+|sharp|@img|@aws-sdk|knex|pg|ioredis|fastify)\//;
const heavy = [...new Set(Object.keys(result.metafile.inputs).filter((f) => forbidden.test(f)).map((f) => forbidden.exec(f)[1]))];
if (heavy.length > 0) {
  console.error(`operator: the bundle must not include ${heavy.join(', ')} (imported from the operator's graph)`);
  process.exit(1);
}
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`operator: bundled into ${path.relative(root, outfile) || outfile} (${(bytes / 1024 / 1024).toFixed(1)} MiB)`);
