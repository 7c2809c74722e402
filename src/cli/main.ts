#!/usr/bin/env node
/**
 * `recog`: the service's command line. Each command lives in its own module under
 * ./commands and exports `register(program)`; its action calls a function that takes its
 * dependencies as arguments, so the work is testable without a shell.
 */
// First: refuses a Node.js too old for the service before anything else loads.
import '../supported-node.js';
import { Command } from 'commander';
import { commands } from './commands/index.js';

/** The program with the sub-command named in argv, or with all of them (for help and errors). */
export async function buildProgram(argv: string[]): Promise<Command> {
  const program = new Command('recog')
    .description('Recognition service: object detection API, its database, models and operator')
    .showHelpAfterError()
    .exitOverride();
  const named = argv[2];
  const names = named !== undefined && Object.hasOwn(commands, named) ? [named] : Object.keys(commands);
  for (const name of names) (await commands[name]()).register(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(argv)).parseAsync(argv);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
      process.exitCode = e.exitCode ?? 1;
      return;
    }
    process.stderr.write(`recog: ${e.message ?? String(err)}\n`);
    process.exitCode = 1;
  }
}

await main(process.argv);
