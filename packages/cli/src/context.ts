/**
 * What every command resolves the same way: the profile, the base URL, the API key
 * (--api-key/--api-key-file > RECOG_API_KEY > profile) and the logged-in console client.
 */
import { readFile, stat } from 'node:fs/promises';
import { checkBaseUrl, ConsoleClient, isLoopbackHost, RecognitionClient } from '@recognition-service/client';
import { UsageError } from './output.js';
import { askHidden, readStdin } from './prompt.js';
import { Settings } from './settings.js';

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  /** A key on the command line (warned about), or "-" for stdin. */
  apiKey?: string;
  apiKeyFile?: string;
  allowInsecureHttp?: boolean;
  json?: boolean;
  timeout?: string;
}

export const DEFAULT_BASE_URL = 'http://localhost:8080';
const USER_AGENT = 'recog-client/0.1.0';

export const API_KEY_ARGUMENT_WARNING =
  'warning: --api-key puts the key in your shell history and in the process list (ps) of this machine; ' +
  'use --api-key-file PATH, --api-key - (stdin), RECOG_API_KEY, or: recog-client config set api_key -';

/** Reads a key from a file: the whole file, trimmed; warns when others may read it. */
export async function readKeyFile(file: string, warn: (m: string) => void): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (process.platform !== 'win32' && (await stat(file)).mode & 0o077) warn(`warning: ${file} is readable by other users; run: chmod 600 ${file}`);
  const key = text.trim();
  if (!key) throw new UsageError(`${file} is empty`);
  return key;
}

export class Context {
  readonly settings: Settings;
  constructor(readonly options: GlobalOptions, readonly env: NodeJS.ProcessEnv = process.env) {
    this.settings = new Settings(options.profile ?? env.RECOG_PROFILE ?? 'default', env);
  }

  get json(): boolean {
    return this.options.json === true;
  }

  async baseUrl(): Promise<string> {
    return this.options.baseUrl || this.env.RECOG_BASE_URL || (await this.settings.readProfile()).base_url || DEFAULT_BASE_URL;
  }

  /** The base URL, checked: https, or http to loopback unless --allow-insecure-http. */
  private async checkedBaseUrl(): Promise<string> {
    const baseUrl = await this.baseUrl();
    const allow = this.options.allowInsecureHttp === true;
    let url: URL;
    try {
      url = checkBaseUrl(baseUrl, allow);
    } catch (err) {
      const hint = /^http:/i.test(baseUrl) ? ', or pass --allow-insecure-http if you accept that' : '';
      throw new UsageError(`${(err as Error).message}${hint}`);
    }
    if (allow && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      this.warn(`warning: --allow-insecure-http: the API key, password and tokens go to ${url.host} unencrypted`);
    }
    return baseUrl;
  }

  warn(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  private timeoutMs(): number | undefined {
    if (this.options.timeout === undefined) return undefined;
    const s = Number(this.options.timeout);
    if (!Number.isFinite(s) || s <= 0) throw new UsageError('--timeout takes a number of seconds');
    return s * 1000;
  }

  /**
   * The API key for inference commands: --api-key-file or --api-key (- reads stdin), then
   * RECOG_API_KEY, then the profile.
   */
  async apiKey(): Promise<string> {
    const { apiKey: flag, apiKeyFile } = this.options;
    if (flag !== undefined && apiKeyFile !== undefined) throw new UsageError('give --api-key or --api-key-file, not both');
    let key: string | undefined;
    if (apiKeyFile !== undefined) key = await readKeyFile(apiKeyFile, (m) => this.warn(m));
    else if (flag === '-') key = (process.stdin.isTTY ? await askHidden('API key: ') : await readStdin()).trim();
    else key = flag || this.env.RECOG_API_KEY || (await this.settings.readProfile()).api_key;
    if (!key) throw new UsageError('no API key: pass --api-key-file PATH or --api-key - (stdin), set RECOG_API_KEY, or run: recog-client config set api_key -');
    return key;
  }

  async recognition(onRetry?: (m: string) => void): Promise<RecognitionClient> {
    return new RecognitionClient({
      baseUrl: await this.checkedBaseUrl(),
      allowInsecureHttp: this.options.allowInsecureHttp,
      apiKey: await this.apiKey(),
      timeoutMs: this.timeoutMs(),
      userAgent: USER_AGENT,
      onRetry: onRetry ? (i) => onRetry(`retry ${i.attempt} in ${Math.round(i.delayMs)} ms after ${i.reason}`) : undefined,
    });
  }

  async console(): Promise<ConsoleClient> {
    return new ConsoleClient({
      baseUrl: await this.checkedBaseUrl(),
      allowInsecureHttp: this.options.allowInsecureHttp,
      store: this.settings.tokenStore(),
      timeoutMs: this.timeoutMs(),
      userAgent: USER_AGENT,
    });
  }

  /** The organisation: --org, then the profile's, then the only one the user belongs to. */
  async org(flag: string | undefined, client: ConsoleClient): Promise<string> {
    const org = flag ?? (await this.settings.readProfile()).org;
    if (org) return org;
    const me = await client.me();
    if (me.memberships.length === 1) return me.memberships[0].org.name;
    const names = me.memberships.map((m) => m.org.name).join(', ') || 'none';
    throw new UsageError(`say which organisation with --org (yours: ${names}), or: recog-client config set org NAME`);
  }
}
