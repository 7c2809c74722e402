import type { Command } from 'commander';

/** Every `recog` sub-command; one module each. */
export const commands: Array<(program: Command) => void> = [];
