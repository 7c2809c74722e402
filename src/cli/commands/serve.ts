/** `recog serve`: runs the service in the foreground (what `npm start` runs). */
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';

export function register(program: Command): void {
  program
    .command('serve')
    .description('Run the recognition service (configuration from the environment)')
    .action(async () => {
      const { runServer } = await import('../../server.js');
      await runServer(loadConfig()); // exits once shut down
    });
}
