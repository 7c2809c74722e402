/**
 * `recog model eval [--images DIR] [--labels coco.json] [--model NAME] [--profile fast|accurate]
 * [--compare NAME | --compare-profile fast|accurate] [--resamples N] [--seed N] [--sweep] [--json]`:
 * the served model's quality on a labelled set (default: the repository's
 * datasets/labelled-photos), with 95% bootstrap intervals over photos; --compare (another model)
 * or --compare-profile (the same model, another DETECTION_PROFILE) runs a second time on the same
 * photos and prints the paired interval of the difference. Models are MODEL_NAME (or --model) in
 * MODEL_REPOSITORY, run by the embedded backend as the service builds its detector.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { createDetector } from '../../src/inference/create-detector.js';
import { loadCatalog } from '../../src/models/catalog.js';
import { bootstrap, detectSet, evaluate, formatEval, formatIntervals, loadCocoSet, type CocoSet } from './eval.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'datasets', 'labelled-photos');
/** Low enough that the precision/recall curve is complete; the serving threshold is applied after. */
const FLOOR = 0.05;

/** One model (or profile) over the set: its detections at the floor and its serving thresholds. */
async function runModel(env: NodeJS.ProcessEnv, set: CocoSet, imagesDir: string) {
  // Always the embedded backend, whatever TRITON_URL the shell exports.
  const config = { ...loadConfig(env), tritonUrl: undefined };
  const catalog = await loadCatalog(config.modelCatalog);
  const { detector, backend } = await createDetector(config, undefined, { floor: FLOOR });
  try {
    const { results, seconds, cpuMs } = await detectSet(detector, set, imagesDir);
    const own = new Map(catalog.classes.map((c) => [c.label, c.threshold]));
    const threshold = (label: string) => own.get(label) ?? config.scoreThreshold;
    const model = config.detectionProfile === 'fast' ? config.modelName : `${detector.model.name} (${config.detectionProfile})`;
    return { model, results, seconds, cpuMsPerImage: cpuMs / results.length, threshold };
  } finally {
    await backend.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      images: { type: 'string' },
      labels: { type: 'string' },
      model: { type: 'string' },
      compare: { type: 'string' },
      profile: { type: 'string' },
      'compare-profile': { type: 'string' },
      resamples: { type: 'string', default: '1000' },
      seed: { type: 'string', default: '1' },
      sweep: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const resamples = Number(values.resamples);
  const seed = Number(values.seed);
  if (!Number.isInteger(resamples) || resamples < 0 || resamples > 100_000) throw new Error('--resamples: an integer from 0 (no intervals) to 100000');
  if (!Number.isInteger(seed)) throw new Error('--seed: an integer');
  // MODEL_CATALOG names one model's catalog: with two models both would get its labels and thresholds.
  if (values.compare && process.env.MODEL_CATALOG) throw new Error('--compare: unset MODEL_CATALOG, so that each model reads its own catalog from MODEL_REPOSITORY');
  const set = await loadCocoSet(values.labels ?? path.join(DATA, 'annotations.json'));
  const imagesDir = values.images ?? path.join(DATA, 'images');
  if (values.compare && values['compare-profile']) throw new Error('--compare and --compare-profile: one second run at a time');
  const env = (model: string | undefined, profile: string | undefined) => ({
    ...process.env,
    ...(model && { MODEL_NAME: model }),
    ...(profile && { DETECTION_PROFILE: profile }),
  });
  const runs = [await runModel(env(values.model, values.profile), set, imagesDir)];
  if (values.compare) runs.push(await runModel(env(values.compare, values.profile), set, imagesDir));
  if (values['compare-profile']) runs.push(await runModel(env(values.model, values['compare-profile']), set, imagesDir));
  const serving = runs.map((r) => ({ model: r.model, ...evaluate(set, r.results, r.threshold, r.seconds), cpuMsPerImage: r.cpuMsPerImage }));
  const intervals = resamples > 0 ? bootstrap(set, runs.map((r) => r.results), runs.map((r) => r.threshold), { resamples, seed }) : undefined;
  if (values.json) {
    const out = serving.map((s, i) => ({ ...s, ...(intervals ? { interval: { resamples, ...intervals.models[i] } } : {}) }));
    const body = out.length === 1 ? out[0] : { models: out, ...(intervals?.difference ? { difference: { resamples, ...intervals.difference } } : {}) };
    process.stdout.write(`${JSON.stringify(body)}\n`);
  } else {
    process.stdout.write(`${serving.map((s) => `${formatEval(s.model, s)}\n${s.cpuMsPerImage.toFixed(0)} ms of CPU per photo (this process, every thread; one photo at a time)`).join('\n\n')}\n`);
    if (intervals) process.stdout.write(`\n${formatIntervals(serving.map((s) => s.model), intervals)}\n`);
  }
  if (values.sweep) {
    for (const r of runs) {
      process.stdout.write(`\n${r.model}: threshold sweep (one threshold for every class): THRESHOLD RECALL PRECISION\n`);
      for (const t of [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6]) {
        const e = evaluate(set, r.results, () => t, r.seconds);
        process.stdout.write(`${t.toFixed(2).padStart(9)} ${e.recall.toFixed(3).padStart(6)} ${e.precision.toFixed(3).padStart(9)}\n`);
      }
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`recog model eval: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
