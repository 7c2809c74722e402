/**
 * `recog model import <file.onnx> [--family yolo|ssd|centernet] [--labels coco80|coco90|labels.txt]
 *  [--catalog catalog.json] [--name N] [--trial-image photo] [--force]`: see import.ts.
 * Writes into MODEL_REPOSITORY.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../../src/config.js';
import type { DetectorFamily } from '../../src/models/detector-spec.js';
import { importModel } from './import.js';

/** The photo of the trial run when none is given: the repository's labelled set has real ones. */
export const DEFAULT_TRIAL_IMAGE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'datasets', 'labelled-photos', 'images', 'skimage-astronaut.png');

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      family: { type: 'string' },
      labels: { type: 'string' },
      catalog: { type: 'string' },
      name: { type: 'string' },
      'trial-image': { type: 'string' },
      force: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new Error('usage: recog model import <file.onnx> [--family yolo|ssd|centernet] [--labels coco80|coco90|labels.txt] [--catalog catalog.json] [--name N] [--trial-image photo] [--force]');
  if (values.family !== undefined && !['yolo', 'ssd', 'centernet'].includes(values.family)) throw new Error(`--family must be yolo, ssd or centernet, not "${values.family}"`);
  const config = loadConfig();
  const result = await importModel({
    file: positionals[0],
    repository: config.modelRepository,
    name: values.name,
    family: values.family as DetectorFamily | undefined,
    labels: values.labels,
    catalog: values.catalog,
    trialImage: values['trial-image'] ?? DEFAULT_TRIAL_IMAGE,
    force: values.force,
    threads: config.inferenceThreads,
    log: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(`${result.modelDir}: ${result.spec.family}, ${result.classes} classes, trial run ${result.trial.length} detection(s)\n`);
  if (result.license && /AGPL/i.test(result.license)) {
    process.stdout.write(`note: the weights are licensed ${result.license}; see docs/model.md before serving them to others\n`);
  }
  process.stdout.write(`serve it with MODEL_NAME=${path.basename(result.modelDir)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`recog model import: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
