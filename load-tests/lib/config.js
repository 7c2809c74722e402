// Settings shared by every scenario, read once from k6's environment (__ENV).
// scripts/load.sh provisions keys and passes all of these with -e; defaults suit a
// service on loopback started with `npm start`.

/** String setting with a default. */
export function env(name, fallback) {
  const v = __ENV[name];
  return v === undefined || v === '' ? fallback : v;
}

/** Numeric setting with a default; a typo must stop the run rather than test nothing. */
export function envNumber(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number (got "${raw}")`);
  return n;
}

export function envBool(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  return raw === '1' || raw.toLowerCase() === 'true' || raw.toLowerCase() === 'yes';
}

/** A setting without which the scenario means nothing. */
export function required(name) {
  const v = __ENV[name];
  if (v === undefined || v === '') {
    throw new Error(`${name} is not set: run the scenario through scripts/load.sh (npm run load -- <scenario>), which provisions it`);
  }
  return v;
}

export const BASE_URL = env('BASE_URL', 'http://127.0.0.1:8080').replace(/\/+$/, '');
/** Where the API fetches URL-mode images from (the runner's loopback static server). */
export const IMAGE_BASE_URL = env('IMAGE_BASE_URL', 'http://127.0.0.1:8081').replace(/\/+$/, '');
/** Absolute directory of the fixture images; the runner sets it. */
export const FIXTURES_DIR = env('FIXTURES_DIR', '');
export const SCENARIO = env('SCENARIO', 'unnamed');
export const RESULTS_DIR = env('RESULTS_DIR', 'load-tests/results');
/** A client timeout just above the API's 29 s sync deadline, as the spec advises. */
export const HTTP_TIMEOUT = env('HTTP_TIMEOUT', '35s');
