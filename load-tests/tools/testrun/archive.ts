/**
 * A scenario of load-tests/ as one `k6 archive` .tar, made with the real k6: the scenario,
 * the lib/ modules it imports and the fixture images it opens, with k6's evaluated options.
 *
 * The files are staged first in the repository's layout (<stage>/repo/load-tests/… and
 * <stage>/shared/fixtures/images) so lib/images.js finds the images through its default
 * relative path, inside the archive as here: the runner pods then need no FIXTURES_DIR.
 * Keys are placeholders during archiving (the scripts refuse to start without them) and
 * `--exclude-env-vars` keeps every variable out of the archive: the runners read the real
 * ones from their environment (a Secret).
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What a key is during archiving; it never reaches the archive (a test checks). */
export const KEY_PLACEHOLDER = 'placeholder-for-k6-archive';

export interface ArchiveOptions {
  k6: string;
  repoRoot: string;
  fixturesDir: string;
  scenario: string;
  /** Scenario settings (RATE, DURATION, …): they decide the options k6 stores. */
  settings: Record<string, string>;
  /** Variables given a placeholder so the init context runs (API_KEY, …). */
  keyNames: readonly string[];
}

export interface Archive {
  tar: Buffer;
  /** The version of k6 that made it, from its metadata: the runners need at least this one. */
  k6Version: string;
}

/** Directories of load-tests/ that are outputs or tools, not scripts. */
const NOT_SCRIPTS = new Set(['results', '.prepared', 'tools', 'node_modules']);

export async function makeArchive(o: ArchiveOptions): Promise<Archive> {
  const stage = await mkdtemp(path.join(os.tmpdir(), 'recog-k6-archive-'));
  try {
    const loadTests = path.join(o.repoRoot, 'load-tests');
    await cp(loadTests, path.join(stage, 'repo', 'load-tests'), {
      recursive: true,
      filter: (src) => !NOT_SCRIPTS.has(path.relative(loadTests, src).split(path.sep)[0] ?? ''),
    });
    const images = path.join(stage, 'shared', 'fixtures', 'images');
    await mkdir(images, { recursive: true });
    for (const f of await readdir(o.fixturesDir, { withFileTypes: true })) {
      if (f.isFile()) await cp(path.join(o.fixturesDir, f.name), path.join(images, f.name));
    }
    const script = path.join(stage, 'repo', 'load-tests', 'scenarios', `${o.scenario}.js`);
    const out = path.join(stage, `${o.scenario}.tar`);
    const env = [
      ...Object.entries(o.settings).map(([k, v]) => `${k}=${v}`),
      ...o.keyNames.map((k) => `${k}=${KEY_PLACEHOLDER}`),
      `SCENARIO=${o.scenario}`,
    ].flatMap((kv) => ['-e', kv]);
    // A minimal environment: a K6_* variable of the caller's shell (K6_VUS, …) must not
    // change the options k6 stores.
    await run(o.k6, ['archive', '--quiet', '--exclude-env-vars', ...env, '-O', out, script], {
      cwd: stage,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: stage, K6_NO_USAGE_REPORT: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    });
    const tar = await readFile(out);
    const metadata = JSON.parse(tarEntries(tar).get('metadata.json')?.toString('utf8') ?? '{}') as { k6version?: string };
    if (!metadata.k6version) throw new Error(`${out}: no k6version in the archive's metadata.json`);
    return { tar, k6Version: metadata.k6version };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/**
 * The regular files of a tar (ustar, with PAX long names as Go's archive/tar writes them),
 * by path. Enough to read an archive k6 made; not a general tar reader.
 */
export function tarEntries(tar: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const field = (block: Buffer, start: number, length: number) => block.subarray(start, start + length).toString('utf8').replace(/\0.*$/s, '');
  let offset = 0;
  let paxPath: string | undefined;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = field(header, 156, 1);
    const prefix = field(header, 345, 155);
    const name = paxPath ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    const body = tar.subarray(offset + 512, offset + 512 + size);
    paxPath = undefined;
    if (type === 'x') {
      // PAX extended header: "<len> path=<value>\n" records for the next entry.
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      paxPath = m?.[1];
    } else if (type === '0' || type === '' || type === '7') {
      files.set(name, Buffer.from(body));
    } else if (type === '1') {
      // A hard link (k6 links the entry script to `data`): the target's bytes.
      const target = files.get(field(header, 157, 100));
      if (target) files.set(name, target);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
