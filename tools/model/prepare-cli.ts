/**
 * `npm run model:prepare [-- --force]` and `recog model prepare [--force]`: builds the model
 * repository configured by MODEL_REPOSITORY / MODEL_NAME (see src/config.ts). Runs before
 * `npm test` and `npm start`; does nothing when the repository is up to date.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../../src/config.js';
import { defaultModelCacheDir, prepareModel, type PreparedModel } from './prepare.js';

export async function runModelPrepare(
  config: Pick<Config, 'modelRepository' | 'modelName'>,
  options: { force?: boolean; cacheDir?: string | null; out?: (line: string) => void },
): Promise<PreparedModel> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = Date.now();
  const prepared = await prepareModel({
    repository: config.modelRepository,
    modelName: config.modelName,
    force: options.force,
    cacheDir: options.cacheDir === undefined ? defaultModelCacheDir(process.env, os.homedir()) : options.cacheDir,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  const how = prepared.upToDate ? 'up to date' : prepared.source === 'cache' ? 'copied from the cache' : 'converted';
  out(`${prepared.modelDir}: ${how} in ${Date.now() - started} ms`);
  out(`  model   ${prepared.modelPath}`);
  out(`  config  ${prepared.configPath}`);
  out(`  catalog ${prepared.catalogPath}`);
  return prepared;
}

async function main(argv: string[]): Promise<void> {
  const unknown = argv.filter((a) => a !== '--force');
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown[0]} (usage: model:prepare [--force])`);
  await runModelPrepare(loadConfig(), { force: argv.includes('--force') });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`model:prepare failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
