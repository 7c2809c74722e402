/**
 * recog-client as a user runs it: the built bin as a child process, with its own
 * $XDG_CONFIG_HOME, against the real service listening on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runCli, type CliRun } from './cli-run.js';

export type { CliRun };

export interface CliHarness {
  t: TestApp;
  baseUrl: string;
  /** HOME of the client; its settings live in home/config/recog-client. */
  home: string;
  /** Runs `recog-client --base-url <service> ...args`; `input` is its stdin. */
  run(args: string[], env?: Record<string, string>, input?: string): Promise<CliRun>;
  close(): Promise<void>;
}

export async function startCliHarness(serviceEnv: Record<string, string> = {}): Promise<CliHarness> {
  const t = await buildTestApp(serviceEnv);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const home = await mkdtemp(path.join(os.tmpdir(), 'recog-client-'));
  return {
    t,
    baseUrl,
    home,
    run: (args, env = {}, input = '') => runCli(home, ['--base-url', baseUrl, ...args], env, input),
    async close() {
      await t.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}
