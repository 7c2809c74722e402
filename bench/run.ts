/**
 * `npm run bench`: runs every bench/*.bench.ts in turn, each printing its own figures
 * next to the raw limit it is compared with. `npm run bench -- detector` runs those whose
 * file name contains "detector".
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? '';
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts') && f.includes(filter))
  .sort();
for (const f of files) {
  process.stdout.write(`\n=== ${f.replace('.bench.ts', '')} ===\n`);
  const mod = (await import(pathToFileURL(path.join(here, f)).href)) as { run?: () => Promise<void> };
  if (typeof mod.run !== 'function') throw new Error(`${f} must export run()`);
  await mod.run();
}
