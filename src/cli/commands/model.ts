/**
 * `recog model prepare [--force]`: builds the Triton model repository (MODEL_REPOSITORY,
 * MODEL_NAME) from the bundled TF.js graph model; a no-op when it is up to date.
 *
 * The converter is a build tool (tools/model/, run from source with tsx), not part of the
 * service: this command runs it in a source checkout. The container image carries a
 * prepared repository and neither the tool nor tsx.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';

/** src/cli/commands or dist/cli/commands: the checkout is three folders up. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const PREPARE_TOOL = path.join(ROOT, 'tools', 'model', 'prepare-cli.ts');
export const IMPORT_TOOL = path.join(ROOT, 'tools', 'model', 'import-cli.ts');
export const EVAL_TOOL = path.join(ROOT, 'tools', 'model', 'eval-cli.ts');

/** Runs tools/model/prepare-cli.ts with tsx in this process's environment; resolves to its exit code. */
export async function runPrepareTool(args: string[], tool = PREPARE_TOOL): Promise<number> {
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx');
  } catch {
    tsx = '';
  }
  if (!existsSync(tool) || !tsx) {
    throw new Error(
      `recog model ${path.basename(tool, '-cli.ts')} needs a source checkout with its dev dependencies (npm ci): the model tools live in tools/model/. ` +
        'A container image already carries its prepared model at MODEL_REPOSITORY.',
    );
  }
  const child = spawn(process.execPath, ['--import', tsx, tool, ...args], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export function register(program: Command): void {
  const model = program.command('model').description('The detection model and its Triton model repository');
  model
    .command('prepare')
    .description('Convert a built-in COCO detector to ONNX and write the model repository (MODEL_REPOSITORY)')
    .option('--force', 'rebuild even when the repository is up to date', false)
    .option('--model <model>', 'centernet (default) or ssdlite (the fast one; serve it with MODEL_NAME=ssdlite)')
    .action(async (opts: { force: boolean; model?: string }) => {
      process.exitCode = await runPrepareTool([...(opts.force ? ['--force'] : []), ...(opts.model ? ['--model', opts.model] : [])]);
    });
  model
    .command('import <file>')
    .description('Add a detector (Ultralytics YOLO ONNX export, TF Object Detection API SSD, CenterNet) to the model repository; runs it once on a photo first')
    .option('--family <family>', 'yolo, ssd or centernet (default: read from the graph)')
    .option('--labels <labels>', 'coco80, coco90 or a labels.txt (default: the names the model carries)')
    .option('--catalog <file>', 'catalog JSON with classes [{index, label, external_id, threshold?}]')
    .option('--name <name>', 'model name in the repository (default: the file name)')
    .option('--trial-image <file>', 'photo of the trial run (default: datasets/labelled-photos/images/skimage-astronaut.png)')
    .option('--force', 'replace an existing model of that name', false)
    .allowUnknownOption(false)
    .action(async (file: string, opts: Record<string, string | boolean | undefined>) => {
      const args = [file];
      for (const k of ['family', 'labels', 'catalog', 'name', 'trialImage'] as const) {
        if (typeof opts[k] === 'string') args.push(`--${k === 'trialImage' ? 'trial-image' : k}`, opts[k]);
      }
      if (opts.force) args.push('--force');
      process.exitCode = await runPrepareTool(args, IMPORT_TOOL);
    });
  model
    .command('eval')
    .description('Per-class AP@0.5, mAP@0.5, recall and precision at the serving threshold, images/s, on a COCO-JSON labelled set, with 95% bootstrap intervals over photos')
    .option('--images <dir>', 'folder of the photos (default: datasets/labelled-photos/images)')
    .option('--labels <file>', 'COCO JSON with the boxes (default: datasets/labelled-photos/annotations.json)')
    .option('--model <name>', 'model in MODEL_REPOSITORY (default: MODEL_NAME)')
    .option('--compare <name>', 'a second model on the same photos, and the paired interval of the difference')
    .option('--resamples <n>', 'bootstrap resamples of the photos (0: no intervals)', '1000')
    .option('--seed <n>', 'seed of the resampling (the same seed, the same intervals)', '1')
    .option('--sweep', 'also print recall and precision for a range of thresholds', false)
    .option('--json', 'one JSON object', false)
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const args: string[] = [];
      for (const k of ['images', 'labels', 'model', 'compare', 'resamples', 'seed'] as const) if (typeof opts[k] === 'string') args.push(`--${k}`, opts[k]);
      if (opts.sweep) args.push('--sweep');
      if (opts.json) args.push('--json');
      process.exitCode = await runPrepareTool(args, EVAL_TOOL);
    });
}
