import type { Command } from 'commander';
import { register as model } from './model.js';

/** Every `recog` sub-command; one module each. */
export const commands: Array<(program: Command) => void> = [model];
