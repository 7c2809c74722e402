/**
 * `npm run model:prepare [-- --force]`: builds the model repository configured by
 * MODEL_REPOSITORY / MODEL_NAME (see src/config.ts). Runs before `npm test` and
 * `npm start`; does nothing when the repository is up to date.
 */
import os from 'node:os';
import { loadConfig } from '../config.js';
import { defaultModelCacheDir, prepareModel } from './prepare.js';

async function main(argv: string[]): Promise<void> {
  const unknown = argv.filter((a) => a !== '--force');
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown[0]} (usage: model:prepare [--force])`);
  const config = loadConfig();
  const started = Date.now();
  const prepared = await prepareModel({
    repository: config.modelRepository,
    modelName: config.modelName,
    force: argv.includes('--force'),
    cacheDir: defaultModelCacheDir(process.env, os.homedir()),
    log: (m) => process.stderr.write(`${m}\n`),
  });
  const how = prepared.upToDate ? 'up to date' : prepared.source === 'cache' ? 'copied from the cache' : 'converted';
  process.stderr.write(`model: ${prepared.modelDir} ${how} (${Date.now() - started} ms)\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`model:prepare failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
