/**
 * The two calls of Triton's model-repository API (KServe v2 HTTP, repository extension) the
 * operator makes on one Triton pod: which versions of a model are ready, and loading a model
 * with the versions the spec pins (desired/versions.ts).
 *
 * A load carries the model's whole configuration as Triton has it (GET .../config), with only
 * version_policy changed: the `config` parameter replaces config.pbtxt for that load, so
 * anything else left out would be lost (batching, instance groups). Triton loads the versions
 * added before it answers, keeps serving the ones kept throughout, and unloads the ones
 * dropped once their requests are done; the same configuration again is a no-op.
 */
import { request } from 'undici';

/** Triton's answers are small (an index, one model's configuration): a larger one is refused. */
const MAX_BODY_BYTES = 1024 * 1024;
/** A Triton error body shown in status and Events is cut here. */
const MAX_ERROR_CHARS = 300;
const READ_TIMEOUT_MS = 10_000;

export class TritonRepositoryError extends Error {
  override readonly name = 'TritonRepositoryError';
  /** Triton's HTTP status, when it answered. */
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

/**
 * One call: undici's request, whose header and body timeouts are the call's own (fetch's
 * would stop a long model load at 300 s), the answer refused past MAX_BODY_BYTES as it streams in.
 */
async function call(base: string, path: string, init: { method: 'GET' | 'POST'; body?: string; timeoutMs: number }): Promise<unknown> {
  const what = `${init.method} ${path}`;
  let status: number;
  let text: string;
  try {
    const res = await request(`${base}${path}`, {
      method: init.method,
      ...(init.body !== undefined ? { body: init.body, headers: { 'content-type': 'application/json' } } : {}),
      headersTimeout: init.timeoutMs,
      bodyTimeout: init.timeoutMs,
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    status = res.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        res.body.destroy();
        throw new TritonRepositoryError(`${what}: answer larger than ${MAX_BODY_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (err instanceof TritonRepositoryError) throw err;
    const e = err as Error & { code?: string };
    const timedOut = e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
    throw new TritonRepositoryError(`${what}: ${timedOut ? `no answer within ${init.timeoutMs / 1000} s` : (e.code ?? e.message)}`);
  }
  if (status < 200 || status > 299) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      /* not JSON: the text as it is */
    }
    throw new TritonRepositoryError(`${what}: HTTP ${status}: ${message.slice(0, MAX_ERROR_CHARS)}`, status);
  }
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new TritonRepositoryError(`${what}: the answer is not JSON`);
  }
}

/** Every model's versions in state READY on the Triton at `base` (http://host:port). */
export async function readyVersions(base: string): Promise<Map<string, string[]>> {
  const index = await call(base, '/v2/repository/index', { method: 'POST', body: '{}', timeoutMs: READ_TIMEOUT_MS });
  if (!Array.isArray(index)) throw new TritonRepositoryError('POST /v2/repository/index: the answer is not a list');
  const ready = new Map<string, string[]>();
  for (const e of index as Array<{ name?: unknown; version?: unknown; state?: unknown }>) {
    if (typeof e.name !== 'string' || typeof e.version !== 'string' || e.state !== 'READY') continue;
    ready.set(e.name, [...(ready.get(e.name) ?? []), e.version]);
  }
  return ready;
}

/**
 * Loads `model` with exactly `versions` (version_policy specific), the rest of its
 * configuration as Triton has it. Returns once Triton has loaded them; `timeoutMs` bounds
 * the load (a large model on a GPU takes a while).
 */
export async function loadVersions(base: string, model: string, versions: readonly string[], timeoutMs: number): Promise<void> {
  // Versions are int64 in Triton and up to 19 digits in the CRD: beyond 2^53 a JSON number
  // would round to another version, so such a version is refused rather than mistaken.
  const numbers = versions.map(Number);
  if (!numbers.every((n) => Number.isSafeInteger(n) && n > 0)) throw new TritonRepositoryError(`versions beyond ${Number.MAX_SAFE_INTEGER} cannot be loaded by the operator: ${versions.join(', ')}`);
  const path = `/v2/models/${encodeURIComponent(model)}/config`;
  const loadPath = `/v2/repository/models/${encodeURIComponent(model)}/load`;
  const readConfig = () => call(base, path, { method: 'GET', timeoutMs: READ_TIMEOUT_MS });
  // A model not loaded at all (unloaded by hand, or its load failed at start) has no
  // configuration to read (Triton: 400 or 404, "unknown model"): loaded first as the
  // repository has it, then read. Any other failure is reported as it is.
  const config = await readConfig().catch(async (err: unknown) => {
    if (!(err instanceof TritonRepositoryError) || (err.status !== 400 && err.status !== 404)) throw err;
    await call(base, loadPath, { method: 'POST', body: '{}', timeoutMs });
    return readConfig();
  });
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new TritonRepositoryError(`GET ${path}: the answer is not a configuration`);
  const withPolicy = JSON.stringify({ ...config, version_policy: { specific: { versions: numbers } } });
  const body = JSON.stringify({ parameters: { config: withPolicy } });
  await call(base, loadPath, { method: 'POST', body, timeoutMs });
}
