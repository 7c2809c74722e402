/**
 * recog-client as a user runs it: the built bin as a child process, with its own
 * $XDG_CONFIG_HOME, against the real service listening on loopback.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const BIN = path.join(REPO_ROOT, 'packages/cli/bin/recog-client.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

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
    run(args, env = {}, input = '') {
      return new Promise((resolve) => {
        const child = execFile(process.execPath, [BIN, '--base-url', baseUrl, ...args], {
          env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), ...env },
          timeout: 60_000,
        }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
        child.stdin!.end(input);
      });
    },
    async close() {
      await t.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}
