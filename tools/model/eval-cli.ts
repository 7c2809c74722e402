/**
 * `recog model eval [--images DIR] [--labels coco.json] [--model NAME] [--sweep]`: the
 * served model's quality on a labelled set (default: the repository's datasets/labelled-photos).
 * The model is MODEL_NAME in MODEL_REPOSITORY, run by the embedded backend.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { Detector } from '../../src/inference/detector.js';
import { loadCatalog } from '../../src/models/catalog.js';
import { detectSet, evaluate, formatEval, loadCocoSet } from './eval.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'datasets', 'labelled-photos');
/** Low enough that the precision/recall curve is complete; the serving threshold is applied after. */
const FLOOR = 0.05;

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { images: { type: 'string' }, labels: { type: 'string' }, model: { type: 'string' }, sweep: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
  const config = loadConfig(values.model ? { ...process.env, MODEL_NAME: values.model } : process.env);
  const set = await loadCocoSet(values.labels ?? path.join(DATA, 'annotations.json'));
  const catalog = await loadCatalog(config.modelCatalog);
  const floorCatalog = { ...catalog, classes: catalog.classes.map(({ threshold: _t, ...c }) => c) };
  const backend = new OnnxRuntimeBackend({ modelPath: path.join(config.modelRepository, config.modelName, '1', 'model.onnx'), modelName: config.modelName, threads: config.inferenceThreads });
  await backend.start();
  try {
    const detector = new Detector(backend, floorCatalog, { scoreThreshold: FLOOR, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    const { results, seconds } = await detectSet(detector, set, values.images ?? path.join(DATA, 'images'));
    const own = new Map(catalog.classes.map((c) => [c.label, c.threshold]));
    const serving = evaluate(set, results, (label) => own.get(label) ?? config.scoreThreshold, seconds);
    if (values.json) process.stdout.write(`${JSON.stringify({ model: config.modelName, ...serving })}\n`);
    else process.stdout.write(`${formatEval(config.modelName, serving)}\n`);
    if (values.sweep) {
      process.stdout.write('\nthreshold sweep (one threshold for every class): THRESHOLD RECALL PRECISION\n');
      for (const t of [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6]) {
        const r = evaluate(set, results, () => t, seconds);
        process.stdout.write(`${t.toFixed(2).padStart(9)} ${r.recall.toFixed(3).padStart(6)} ${r.precision.toFixed(3).padStart(9)}\n`);
      }
    }
  } finally {
    await backend.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`recog model eval: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
