/**
 * The service's configuration: read from the environment once, at the composition root,
 * validated with a clear message, typed and frozen. Nothing below reads process.env.
 *
 * What the settings are (names, parsing, defaults, docs, CRD bounds) is declared in
 * src/settings.ts, shared with the operator; this module is the API's loader of them.
 */
import { Reader, SETTINGS, type Config, type Env, type Setting } from './settings.js';

export { SETTINGS, type Config, type PodSource, type Setting, type SettingName, type StorageSecretKey } from './settings.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Builds the configuration from an environment (process.env at the composition root). */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const r = new Reader(env);
  const config: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as Array<[string, Setting<unknown>]>) {
    config[key] = setting.read(r, config);
  }
  if (r.problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${r.problems.join('\n  - ')}`);
  }
  return Object.freeze(config as Config);
}
