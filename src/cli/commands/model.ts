/**
 * `recog model prepare [--force]`: builds the Triton model repository (MODEL_REPOSITORY,
 * MODEL_NAME) from the bundled TF.js graph model; a no-op when it is up to date.
 */
import os from 'node:os';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.js';
import { defaultModelCacheDir, prepareModel, type PreparedModel } from '../../models/prepare.js';

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

export function register(program: Command): void {
  const model = program.command('model').description('The detection model and its Triton model repository');
  model
    .command('prepare')
    .description('Convert the bundled COCO detector to ONNX and write the model repository (MODEL_REPOSITORY)')
    .option('--force', 'rebuild even when the repository is up to date', false)
    .action(async (opts: { force: boolean }) => {
      await runModelPrepare(loadConfig(), { force: opts.force });
    });
}
