/**
 * `npm run model:prepare [-- --force] [--model centernet|ssdlite]` and `recog model prepare`:
 * builds the model repository configured by MODEL_REPOSITORY / MODEL_NAME (see
 * src/config.ts). `--model ssdlite` builds the SSDLite entry (directory "ssdlite") beside
 * it; MODEL_NAME=ssdlite does the same. With DETECTION_PROFILE=accurate it also builds the
 * built-in models of ENSEMBLE_MODELS. Runs before `npm test` and `npm start`; does nothing
 * when the repository is up to date.
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { loadConfig, type Config } from '../../src/config.js';
import { BUILTIN_MODELS, defaultModelCacheDir, prepareModel, type BuiltinModel, type PreparedModel } from './prepare.js';

export async function runModelPrepare(
  config: Pick<Config, 'modelRepository' | 'modelName'>,
  options: { force?: boolean; model?: BuiltinModel; cacheDir?: string | null; out?: (line: string) => void },
): Promise<PreparedModel> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = Date.now();
  const prepared = await prepareModel({
    repository: config.modelRepository,
    modelName: options.model ?? config.modelName,
    model: options.model,
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
  const usage = `usage: model:prepare [--force] [--model ${BUILTIN_MODELS.join('|')}]`;
  let model: BuiltinModel | undefined;
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--force') force = true;
    else if (argv[i] === '--model') {
      const m = argv[++i];
      if (!BUILTIN_MODELS.includes(m as BuiltinModel)) throw new Error(`--model: expected ${BUILTIN_MODELS.join(' or ')}, got ${m ?? 'nothing'} (${usage})`);
      model = m as BuiltinModel;
    } else throw new Error(`unknown argument ${argv[i]} (${usage})`);
  }
  const config = loadConfig();
  await runModelPrepare(config, { force, model });
  // DETECTION_PROFILE=accurate npm start: the ensemble's built-in partners are prepared too.
  if (model === undefined && config.detectionProfile === 'accurate') {
    for (const partner of config.ensembleModels) {
      if (BUILTIN_MODELS.includes(partner as BuiltinModel)) await runModelPrepare(config, { force, model: partner as BuiltinModel });
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`model:prepare failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
