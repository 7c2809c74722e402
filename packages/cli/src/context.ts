/**
 * What every command resolves the same way: the profile, the base URL, the API key
 * (flag > RECOG_API_KEY > profile) and the logged-in console client.
 */
import { ConsoleClient, RecognitionClient } from '@recognition-service/client';
import { UsageError } from './output.js';
import { Settings } from './settings.js';

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  apiKey?: string;
  json?: boolean;
  timeout?: string;
}

export const DEFAULT_BASE_URL = 'http://localhost:8080';
const USER_AGENT = 'recog-client/0.1.0';

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

  private timeoutMs(): number | undefined {
    if (this.options.timeout === undefined) return undefined;
    const s = Number(this.options.timeout);
    if (!Number.isFinite(s) || s <= 0) throw new UsageError('--timeout takes a number of seconds');
    return s * 1000;
  }

  /** The API key for inference commands: --api-key, then RECOG_API_KEY, then the profile. */
  async apiKey(): Promise<string> {
    const key = this.options.apiKey || this.env.RECOG_API_KEY || (await this.settings.readProfile()).api_key;
    if (!key) throw new UsageError('no API key: pass --api-key, set RECOG_API_KEY, or run: recog-client config set api_key -');
    return key;
  }

  async recognition(onRetry?: (m: string) => void): Promise<RecognitionClient> {
    return new RecognitionClient({
      baseUrl: await this.baseUrl(),
      apiKey: await this.apiKey(),
      timeoutMs: this.timeoutMs(),
      userAgent: USER_AGENT,
      onRetry: onRetry ? (i) => onRetry(`retry ${i.attempt} in ${Math.round(i.delayMs)} ms after ${i.reason}`) : undefined,
    });
  }

  async console(): Promise<ConsoleClient> {
    return new ConsoleClient({ baseUrl: await this.baseUrl(), store: this.settings.tokenStore(), timeoutMs: this.timeoutMs(), userAgent: USER_AGENT });
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
