/**
 * A real SMTP server for the invitation e-mail tests: the Mailpit binary built by
 * scripts/mailpit.sh, started on 127.0.0.1 with free ports for SMTP and its HTTP API and a
 * database in a temporary directory. Ready when its API answers (polled, no sleeps). Under
 * CI=true a missing binary fails the test; elsewhere the test skips and says what to run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findBinary, freePort, killLocalServer, startLocalServer, type LocalServer } from './local-server.js';

/** The Mailpit binary, or a reason to skip (outside CI). Throws under CI=true. */
export function findMailpit(): { bin: string } | { skip: string } {
  return findBinary('mailpit', 'Mailpit', 'MAILPIT_BIN_DIR');
}

/** A message as Mailpit's API lists it. */
export interface MailpitSummary {
  ID: string;
  From: { Name: string; Address: string };
  To: Array<{ Name: string; Address: string }>;
  Subject: string;
}

/** One message with its bodies. */
export interface MailpitMessage extends MailpitSummary {
  Text: string;
  HTML: string;
}

export interface MailpitServer {
  /** SMTP_URL for the app: plain SMTP to loopback. */
  smtpUrl: string;
  smtpPort: number;
  apiUrl: string;
  messages(): Promise<MailpitSummary[]>;
  message(id: string): Promise<MailpitMessage>;
  /** Deletes every message. */
  clear(): Promise<void>;
  /** Kills the server (an outage); start() brings it back on the same ports. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** `extraArgs`: more of Mailpit's flags (`--smtp-allowed-recipients <regexp>` to refuse addresses). */
export async function startMailpit(bin: string, extraArgs: string[] = []): Promise<MailpitServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-mailpit-'));
  const smtpPort = await freePort();
  const httpPort = await freePort();
  const apiUrl = `http://127.0.0.1:${httpPort}`;
  let server: LocalServer | undefined;

  async function call<T>(method: string, route: string): Promise<T> {
    const res = await fetch(`${apiUrl}/api/v1${route}`, { method });
    if (!res.ok) throw new Error(`mailpit ${method} ${route}: ${res.status} ${await res.text()}`);
    return (res.headers.get('content-type') ?? '').includes('json') ? ((await res.json()) as T) : (undefined as T);
  }

  async function start(): Promise<void> {
    const args = ['--smtp', `127.0.0.1:${smtpPort}`, '--listen', `127.0.0.1:${httpPort}`, '--database', path.join(dir, 'mailpit.db'), '--disable-version-check', '--quiet', ...extraArgs];
    server = await startLocalServer('mailpit', { bin, args }, `${apiUrl}/readyz`, 30_000);
  }

  async function stop(): Promise<void> {
    const s = server;
    server = undefined;
    await killLocalServer(s);
  }

  await start();
  return {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    smtpPort,
    apiUrl,
    messages: async () => (await call<{ messages: MailpitSummary[] }>('GET', '/messages')).messages,
    message: (id) => call<MailpitMessage>('GET', `/message/${encodeURIComponent(id)}`),
    clear: () => call<void>('DELETE', '/messages'),
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
