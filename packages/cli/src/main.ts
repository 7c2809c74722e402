/**
 * recog-client: the command-line client for people who call the recognition API.
 * Exit codes: 0 ok, 1 other failure, 2 usage, 3 auth, 4 limits, 5 server or network,
 * 6 some images ended in ERROR/FAILED.
 */
import { Command, CommanderError } from 'commander';
import { registerAccount } from './commands/account.js';
import { registerInference } from './commands/inference.js';
import { registerSettings } from './commands/settings.js';
import { API_KEY_ARGUMENT_WARNING, Context, type GlobalOptions } from './context.js';
import { classify, EXIT } from './output.js';

export function buildProgram(): { program: Command; exitCode: () => number } {
  let exit: number = EXIT.ok;
  const program = new Command('recog-client')
    .description('Client for the recognition API: recognize images with an API key; manage keys with your login.')
    .version('0.1.0')
    .option('--profile <name>', 'settings profile (env RECOG_PROFILE; default "default")')
    .option('--base-url <url>', 'service address, https:// (http:// only to this machine); env RECOG_BASE_URL; default http://localhost:8080')
    .option('--api-key-file <path>', 'read the API key for inference commands from this file (or env RECOG_API_KEY, or config set api_key -)')
    .option('--api-key <key|->', 'API key; "-" reads it from stdin. A key given here lands in shell history and ps: prefer --api-key-file')
    .option('--allow-insecure-http', 'INSECURE: allow plain http:// to hosts other than this machine (key, password and tokens travel unencrypted)')
    .option('--json', 'machine-readable output')
    .option('--timeout <seconds>', 'per-attempt timeout (default 35)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .hook('preAction', () => {
      const key = program.opts<GlobalOptions>().apiKey;
      if (key !== undefined && key !== '-') process.stderr.write(`${API_KEY_ARGUMENT_WARNING}\n`);
    });
  const ctx = () => new Context(program.opts<GlobalOptions>());
  registerInference(program, ctx, (code) => (exit = code));
  registerAccount(program, ctx);
  registerSettings(program, ctx);
  for (const cmd of program.commands) cmd.exitOverride();
  return { program, exitCode: () => exit };
}

export async function main(argv: string[]): Promise<number> {
  const { program, exitCode } = buildProgram();
  try {
    await program.parseAsync(argv);
    return exitCode();
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander refuses is a usage error.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { code, message } = classify(err);
    process.stderr.write(`recog-client: ${message}\n`);
    return code;
  }
}

process.exitCode = await main(process.argv);
