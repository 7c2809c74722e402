import type { Command } from 'commander';
import { register as model } from './model.js';
import { register as operator } from './operator.js';
import { register as serve } from './serve.js';
import { register as db } from './db.js';
import { register as orgs } from './orgs.js';
import { register as keys } from './keys.js';
import { register as inferenceServer } from './inference-server.js';
import { register as detect } from './detect.js';

/** Every `recog` sub-command; one module each. */
export const commands: Array<(program: Command) => void> = [serve, db, orgs, keys, model, operator, inferenceServer, detect];
