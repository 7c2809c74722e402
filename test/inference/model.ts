/** The prepared model for tests (npm run model:prepare builds it; `npm test` runs that first). */
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

export function testConfig(env: Record<string, string> = {}): Readonly<Config> {
  return loadConfig({ MODEL_REPOSITORY: path.join(REPO_ROOT, 'model-repository'), ...env });
}

export const INPUT_SHAPE = [1, 512, 512, 3];
