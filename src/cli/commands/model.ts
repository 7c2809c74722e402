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

/** Runs tools/model/prepare-cli.ts with tsx in this process's environment; resolves to its exit code. */
export async function runPrepareTool(args: string[]): Promise<number> {
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx');
  } catch {
    tsx = '';
  }
  if (!existsSync(PREPARE_TOOL) || !tsx) {
    throw new Error(
      'recog model prepare needs a source checkout with its dev dependencies (npm ci): the converter lives in tools/model/. ' +
        'A container image already carries its prepared model at MODEL_REPOSITORY.',
    );
  }
  const child = spawn(process.execPath, ['--import', tsx, PREPARE_TOOL, ...args], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export function register(program: Command): void {
  const model = program.command('model').description('The detection model and its Triton model repository');
  model
    .command('prepare')
    .description('Convert the bundled COCO detector to ONNX and write the model repository (MODEL_REPOSITORY)')
    .option('--force', 'rebuild even when the repository is up to date', false)
    .action(async (opts: { force: boolean }) => {
      process.exitCode = await runPrepareTool(opts.force ? ['--force'] : []);
    });
}
