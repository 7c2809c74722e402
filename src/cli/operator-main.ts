#!/usr/bin/env node
/**
 * The operator's own entry point: `recog operator` and nothing else, so that its bundle
 * (scripts/build-operator.mjs, the recognition-operator image) carries the Kubernetes
 * client and none of the API's dependencies (ONNX Runtime, sharp, the AWS SDK, knex).
 * Same flags as `recog operator`: node dist/operator/operator.js [--workers=2 ...].
 * No supported-node check here: it reads package.json, which the bundle does not ship,
 * and the image pins its Node.js.
 */
import { Command } from 'commander';
import { register } from './commands/operator.js';

async function main(argv: string[]): Promise<void> {
  const program = new Command('recognition-operator').showHelpAfterError().exitOverride();
  register(program);
  try {
    // The flags follow the program name: parse them as `recognition-operator operator <flags>`.
    await program.parseAsync([argv[0], argv[1], 'operator', ...argv.slice(2)]);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      process.exitCode = e.exitCode ?? 1;
      return;
    }
    process.stderr.write(`recognition-operator: ${e.message ?? String(err)}\n`);
    process.exitCode = 1;
  }
}

await main(process.argv);
