/**
 * Reads a Triton model repository the way Triton does for our models:
 * <repo>/<model>/config.pbtxt and <repo>/<model>/<version>/model.onnx, the highest
 * numeric version served (Triton's default version policy, "latest 1").
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseTritonConfig, type TritonModelConfig, type TritonTensorConfig } from '../../models/triton-config.js';
import { tensorDatatypeOf, type ServedModelConfig, type TensorConfig } from './served-model.js';

export interface RepositoryModel {
  config: ServedModelConfig;
  version: string;
  /** The model file of that version. */
  modelPath: string;
}

/** The model file name Triton looks for, per platform. */
const DEFAULT_FILE: Record<string, string> = { onnxruntime_onnx: 'model.onnx', onnxruntime: 'model.onnx' };

export class ModelRepositoryError extends Error {
  override readonly name = 'ModelRepositoryError';
}

export function toServedConfig(c: TritonModelConfig, source: string): ServedModelConfig {
  const tensor = (t: TritonTensorConfig): TensorConfig => {
    try {
      return { name: t.name, datatype: tensorDatatypeOf(t.dataType), dims: [...t.dims], ...(t.reshape ? { reshape: [...t.reshape] } : {}) };
    } catch (err) {
      throw new ModelRepositoryError(`${source}: tensor ${t.name}: ${(err as Error).message}`);
    }
  };
  const defaultModelFilename = DEFAULT_FILE[c.platform];
  if (!defaultModelFilename) throw new ModelRepositoryError(`${source}: platform "${c.platform}" is not served here (only onnxruntime_onnx)`);
  return {
    name: c.name,
    platform: c.platform,
    backend: 'onnxruntime',
    maxBatchSize: c.maxBatchSize,
    inputs: c.inputs.map(tensor),
    outputs: c.outputs.map(tensor),
    instanceCount: Math.max(1, c.instanceGroups.reduce((n, g) => n + g.count, 0)),
    dynamicBatching: c.dynamicBatching
      ? { maxQueueDelayUs: c.dynamicBatching.maxQueueDelayMicroseconds ?? 0, preferredBatchSizes: c.dynamicBatching.preferredBatchSize ?? [] }
      : undefined,
    defaultModelFilename,
  };
}

/** One model directory → its config and served version. */
export async function loadRepositoryModel(dir: string): Promise<RepositoryModel> {
  const configFile = path.join(dir, 'config.pbtxt');
  let text: string;
  try {
    text = await readFile(configFile, 'utf8');
  } catch (err) {
    throw new ModelRepositoryError(`cannot read ${configFile}: ${(err as Error).message}`);
  }
  let parsed: TritonModelConfig;
  try {
    parsed = parseTritonConfig(text);
  } catch (err) {
    throw new ModelRepositoryError(`${configFile}: ${(err as Error).message}`);
  }
  if (parsed.name !== path.basename(dir)) {
    // Triton refuses this too: the directory name is the model name.
    throw new ModelRepositoryError(`${configFile}: name "${parsed.name}" differs from its directory "${path.basename(dir)}"`);
  }
  const config = toServedConfig(parsed, configFile);
  const versions: number[] = [];
  for (const name of await subdirectories(dir)) {
    if (!/^\d+$/.test(name)) continue;
    const file = path.join(dir, name, config.defaultModelFilename);
    if (await stat(file).then((s) => s.isFile(), () => false)) versions.push(Number(name));
  }
  if (versions.length === 0) throw new ModelRepositoryError(`${dir}: no version directory holds ${config.defaultModelFilename} (run: npm run model:prepare)`);
  const version = String(Math.max(...versions));
  return { config, version, modelPath: path.join(dir, version, config.defaultModelFilename) };
}

/** Names of the subdirectories of `dir`, symbolic links to directories included (Triton follows them too). */
export async function subdirectories(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(path.join(dir, e.name)).then((s) => s.isDirectory(), () => false)));
    if (isDir) names.push(e.name);
  }
  return names;
}

/** Every model of the repository (or only `only`), sorted by name. */
export async function discoverModels(repository: string, only?: string[]): Promise<RepositoryModel[]> {
  let names: string[];
  try {
    names = (await subdirectories(repository)).sort();
  } catch (err) {
    throw new ModelRepositoryError(`cannot read the model repository ${repository}: ${(err as Error).message} (run: npm run model:prepare)`);
  }
  const withConfig: string[] = [];
  for (const n of names) {
    if (await stat(path.join(repository, n, 'config.pbtxt')).then(() => true, () => false)) withConfig.push(n);
  }
  const wanted = only ?? withConfig;
  for (const n of wanted) {
    if (!withConfig.includes(n)) throw new ModelRepositoryError(`model ${n} is not in ${repository} (found: ${withConfig.join(', ') || 'none'})`);
  }
  if (wanted.length === 0) throw new ModelRepositoryError(`no model in ${repository} (run: npm run model:prepare)`);
  return Promise.all(wanted.map((n) => loadRepositoryModel(path.join(repository, n))));
}
