import type { Command } from 'commander';

type CommandModule = { register(program: Command): void };

/**
 * Every `recog` sub-command, one module each, by name. Modules load on demand: a
 * `recog keys list` should not pay for loading the Kubernetes client or ONNX Runtime.
 */
export const commands: Record<string, () => Promise<CommandModule>> = {
  serve: () => import('./serve.js'),
  db: () => import('./db.js'),
  orgs: () => import('./orgs.js'),
  keys: () => import('./keys.js'),
  model: () => import('./model.js'),
  operator: () => import('./operator.js'),
  'inference-server': () => import('./inference-server.js'),
  detect: () => import('./detect.js'),
  users: () => import('./users.js'),
  audit: () => import('./audit.js'),
};
