/**
 * Where the client keeps its settings and tokens: $XDG_CONFIG_HOME/recog-client (default
 * ~/.config/recog-client). `config.json` holds profiles (base URL, organisation, API key);
 * `credentials.json` the login tokens per profile. Both are written 0600, atomically.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TokenStore, Tokens } from '@recognition-service/client';

export interface Profile {
  base_url?: string;
  api_key?: string;
  org?: string;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

interface CredentialsFile {
  profiles: Record<string, Tokens>;
}

export const PROFILE_KEYS = ['base_url', 'api_key', 'org'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.config'), 'recog-client');
}

const warned = new Set<string>();

/** Reads a JSON file; warns once when others may read it (it can hold a key or tokens). */
async function readJsonFile<T>(file: string, empty: T, warn: (m: string) => void): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw err;
  }
  const mode = (await stat(file)).mode;
  if (mode & 0o077 && !warned.has(file)) {
    warned.add(file);
    warn(`warning: ${file} is readable by other users; run: chmod 600 ${file}`);
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${file} is not valid JSON; fix or remove it`);
  }
}

/** Write to a private temp file, then rename: readers see the old file or the new one, never half. */
async function writeJsonFile(file: string, data: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export class Settings {
  readonly dir: string;
  constructor(
    readonly profile: string,
    env: NodeJS.ProcessEnv = process.env,
    private readonly warn: (m: string) => void = (m) => process.stderr.write(`${m}\n`),
  ) {
    this.dir = configDir(env);
  }

  get configFile(): string {
    return path.join(this.dir, 'config.json');
  }

  get credentialsFile(): string {
    return path.join(this.dir, 'credentials.json');
  }

  async readProfile(): Promise<Profile> {
    const cfg = await readJsonFile<ConfigFile>(this.configFile, { profiles: {} }, this.warn);
    return cfg.profiles?.[this.profile] ?? {};
  }

  async allProfiles(): Promise<Record<string, Profile>> {
    return (await readJsonFile<ConfigFile>(this.configFile, { profiles: {} }, this.warn)).profiles ?? {};
  }

  async setProfileValue(key: ProfileKey, value: string | undefined): Promise<void> {
    const cfg = await readJsonFile<ConfigFile>(this.configFile, { profiles: {} }, this.warn);
    cfg.profiles ??= {};
    const p = (cfg.profiles[this.profile] ??= {});
    if (value === undefined) delete p[key];
    else p[key] = value;
    await writeJsonFile(this.configFile, cfg);
  }

  /** The login tokens of this profile, shared safely by commands running at once. */
  tokenStore(): TokenStore {
    const file = this.credentialsFile;
    const profile = this.profile;
    const warn = this.warn;
    const read = () => readJsonFile<CredentialsFile>(file, { profiles: {} }, warn);
    return {
      async load() {
        return (await read()).profiles?.[profile] ?? null;
      },
      async save(tokens: Tokens) {
        const creds = await read();
        creds.profiles ??= {};
        creds.profiles[profile] = tokens;
        await writeJsonFile(file, creds);
      },
      async clear() {
        const creds = await read();
        if (creds.profiles?.[profile] === undefined) return;
        delete creds.profiles[profile];
        await writeJsonFile(file, creds);
      },
      locked: <T>(fn: () => Promise<T>) => withFileLock(`${file}.lock`, fn),
    };
  }
}

/**
 * An exclusive lock between processes: a lock file created with O_EXCL. A lock older than
 * `staleMs` is taken to belong to a process that died holding it.
 */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, waitMs = 30_000, staleMs = 60_000): Promise<T> {
  await mkdir(path.dirname(lockFile), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lockFile).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > staleMs) {
        await rm(lockFile, { force: true });
        continue;
      }
      // eslint-disable-next-line preserve-caught-error -- the caught EEXIST is expected, not the cause
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockFile}; remove it if no other recog-client is running`);
      await new Promise((r) => setTimeout(r, 25 + Math.random() * 50));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockFile, { force: true });
  }
}
