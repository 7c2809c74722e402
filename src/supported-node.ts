/**
 * The oldest Node.js the service runs on is package.json's `engines.node`, the one place it
 * is written (the service's own dependencies, cookie and content-disposition, set it at 22).
 * The entry points import this module first, so an older runtime is refused at once with
 * one line that says what to do, never a service that starts and then fails its requests.
 */
import { readFileSync } from 'node:fs';

type Version = [major: number, minor: number, patch: number];

function parse(version: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** The minimum of an engines range; this project writes only the form ">=X.Y.Z". */
export function minimumOf(range: string): string {
  const m = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (!m) throw new Error(`package.json engines.node must read ">=X.Y.Z", not ${JSON.stringify(range)}`);
  return m[1];
}

export function isOlder(version: string, than: string): boolean {
  const a = parse(version);
  const b = parse(than);
  if (!a || !b) throw new Error(`not a Node.js version: ${a ? than : version}`);
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

/** The line that refuses `version`, or undefined when it is new enough. */
export function refusal(version: string, range: string): string | undefined {
  const minimum = minimumOf(range);
  if (!isOlder(version, minimum)) return undefined;
  return `recognition-service needs Node.js ${minimum} or newer, not v${version}: run \`npm ci && npm start\` (npm runs it on the Node.js the lockfile pins) or install a newer Node.js`;
}

export function enginesRange(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines?: { node?: string } };
  if (pkg.engines?.node === undefined) throw new Error('package.json has no engines.node');
  return pkg.engines.node;
}

const why = refusal(process.versions.node, enginesRange());
if (why !== undefined) {
  process.stderr.write(`${why}\n`);
  process.exit(1);
}
