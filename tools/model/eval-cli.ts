/**
 * `recog model eval [--images DIR] [--labels coco.json] [--model NAME] [--compare NAME]
 * [--resamples N] [--seed N] [--sweep] [--json]`: the served model's quality on a labelled set
 * (default: the repository's datasets/labelled-photos), with 95% bootstrap intervals over
 * photos; --compare runs a second model on the same photos and prints the paired interval of
 * the difference. Models are MODEL_NAME (or --model) in MODEL_REPOSITORY, run by the
 * embedded backend.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { Detector } from '../../src/inference/detector.js';
import { loadCatalog } from '../../src/models/catalog.js';
import { bootstrap, detectSet, evaluate, formatEval, formatIntervals, loadCocoSet, type CocoSet } from './eval.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'datasets', 'labelled-photos');
/** Low enough that the precision/recall curve is complete; the serving threshold is applied after. */
const FLOOR = 0.05;

/** One model over the set: its detections at the floor and its serving thresholds. */
async function runModel(modelName: string | undefined, set: CocoSet, imagesDir: string) {
  const config = loadConfig(modelName ? { ...process.env, MODEL_NAME: modelName } : process.env);
  const catalog = await loadCatalog(config.modelCatalog);
  const floorCatalog = { ...catalog, classes: catalog.classes.map(({ threshold: _t, ...c }) => c) };
  const backend = new OnnxRuntimeBackend({ modelPath: path.join(config.modelRepository, config.modelName, '1', 'model.onnx'), modelName: config.modelName, threads: config.inferenceThreads });
  await backend.start();
  try {
    const detector = new Detector(backend, floorCatalog, { scoreThreshold: FLOOR, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    const { results, seconds } = await detectSet(detector, set, imagesDir);
    const own = new Map(catalog.classes.map((c) => [c.label, c.threshold]));
    const threshold = (label: string) => own.get(label) ?? config.scoreThreshold;
    return { model: config.modelName, results, seconds, threshold };
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
  const runs = [await runModel(values.model, set, imagesDir)];
  if (values.compare) runs.push(await runModel(values.compare, set, imagesDir));
  const serving = runs.map((r) => ({ model: r.model, ...evaluate(set, r.results, r.threshold, r.seconds) }));
  const intervals = resamples > 0 ? bootstrap(set, runs.map((r) => r.results), runs.map((r) => r.threshold), { resamples, seed }) : undefined;
  if (values.json) {
    const out = serving.map((s, i) => ({ ...s, ...(intervals ? { interval: { resamples, ...intervals.models[i] } } : {}) }));
    const body = out.length === 1 ? out[0] : { models: out, ...(intervals?.difference ? { difference: { resamples, ...intervals.difference } } : {}) };
    process.stdout.write(`${JSON.stringify(body)}\n`);
  } else {
    process.stdout.write(`${serving.map((s) => formatEval(s.model, s)).join('\n\n')}\n`);
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
