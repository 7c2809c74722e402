/**
 * Weights that are fetched for tests only and never committed (YOLO12n is AGPL-3.0):
 * scripts/yolo12n.sh puts them in the per-user cache. Under CI=true a missing file fails
 * the test; elsewhere the test is skipped with the command to run.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function yolo12nPath(): string {
  const base = process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return process.env.YOLO12N_ONNX ?? path.join(process.env.YOLO12N_DIR ?? path.join(base, 'recognition-service', 'weights'), 'yolov12n-easy-yolo-0.1.3.onnx');
}

/** The file; undefined outside CI when it is missing (the tests then skip, naming `fetch`). */
export function optionalWeights(file: string, fetch: string): string | undefined {
  if (existsSync(file)) return file;
  if (process.env.CI === 'true') throw new Error(`${file} is missing: run ${fetch}`);
  return undefined;
}
