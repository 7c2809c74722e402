/** Runs the built recog-client bin as a child process with its own HOME and $XDG_CONFIG_HOME. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/fixtures.js';

export const BIN = path.join(REPO_ROOT, 'packages/cli/bin/recog-client.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `recog-client ...args` with `input` on stdin; settings under home/config/recog-client. */
export function runCli(home: string, args: string[], env: Record<string, string> = {}, input = ''): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), ...env },
      timeout: 60_000,
    }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
    child.stdin!.end(input);
  });
}
