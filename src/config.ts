/**
 * The service's configuration: read from the environment once, at the composition root,
 * validated with a clear message, typed and frozen. Nothing below reads process.env.
 */
import os from 'node:os';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** Unset: embedded PostgreSQL under dataDir. */
  databaseUrl?: string;
  /** Unset: in-process limiter. */
  redisUrl?: string;
  /** Unset: embedded ONNX Runtime. host:port of Triton's gRPC endpoint otherwise. */
  tritonUrl?: string;
  tritonModelName: string;
  /** Empty: the server's latest version. */
  tritonModelVersion: string;
  dataDir: string;
  publicBaseUrl: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

  modelRepository: string;
  modelName: string;
  /** Path of the catalog JSON (class index → label, external_id). */
  modelCatalog: string;
  scoreThreshold: number;
  nmsIou: number;
  inferenceThreads: number;

  syncTimeoutMs: number;
  batchConcurrency: number;
  bodyLimitBytes: number;
  imageMaxBase64Bytes: number;
  imageMaxPixels: number;
  imageFetchAllowCidrs: string[];
  imageFetchTimeoutMs: number;
  imageFetchMaxBytes: number;
  imageFetchMaxRedirects: number;
  /** HMAC key for signed image URLs; unset: generated once and kept under dataDir. */
  imageUrlSecret?: string;
  imageUrlTtlSeconds: number;

  rateLimitPerMinute: number;
  lookupRateLimitPerMinute: number;
  defaultMonthlyQuota: number;

  metricsPort?: number;
  shutdownTimeoutMs: number;

  /** Time a client has to send its request headers (Node's headersTimeout). */
  httpHeadersTimeoutMs: number;
  /** Time a client has to send its whole request, headers and body (Node's requestTimeout). */
  httpRequestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open; keep it above the load balancer's. */
  httpKeepAliveTimeoutMs: number;
  /** Inactivity on a connection before it is closed; above the sync limit (no bytes flow while a request is processed). */
  httpSocketTimeoutMs: number;
  /** Open connections the server accepts at once; more are closed on arrival. */
  httpMaxConnections: number;
  /** Requests one client address may have in flight; more get 429. 0: no cap. */
  httpMaxInFlightPerClient: number;
  /** Fastify's trustProxy: false, a hop count, or addresses/CIDRs of trusted proxies. */
  trustProxy: boolean | number | string;

  /** Images decoded and inferred at once (each holds up to imageMaxPixels in memory). */
  detectConcurrency: number;
  /** Images waiting for a decode/inference slot; when full, new work gets 503. */
  detectQueueLength: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  str(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === '' ? fallback : v;
  }

  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  }

  num(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.optional(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error();
    } catch {
      this.problems.push(`${name} must be a URL with scheme ${protocols.join(' or ')} (got "${raw}")`);
    }
    return raw;
  }

  cidrs(name: string): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return [];
    const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
    for (const c of list) {
      if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c)) this.problems.push(`${name}: "${c}" is not a CIDR such as 10.0.0.0/8`);
    }
    return list;
  }
}

/** TRUST_PROXY: unset/false, true, a hop count, or a comma-separated list of addresses/CIDRs. */
function trustProxyFrom(r: Reader): boolean | number | string {
  const raw = r.optional('TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const a of list) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a)) r.problems.push(`TRUST_PROXY: "${a}" is not an address or CIDR (or use true, false, or a hop count)`);
  }
  return list.join(',');
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MB = 1024 * 1024;

/** Builds the configuration from an environment (process.env at the composition root). */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const r = new Reader(env);
  const port = r.int('PORT', 8080, 0, 65535);
  const dataDir = path.resolve(r.str('DATA_DIR', './.data'));
  const modelRepository = path.resolve(r.str('MODEL_REPOSITORY', './model-repository'));
  const modelName = r.str('MODEL_NAME', 'centernet');
  const tritonUrl = r.optional('TRITON_URL');
  if (tritonUrl !== undefined && !/^[\w.-]+:\d+$|^\[[0-9a-fA-F:]+\]:\d+$|^(dns|ipv4|ipv6):/.test(tritonUrl.replace(/^grpc:\/\//, ''))) {
    r.problems.push(`TRITON_URL must be host:port of Triton's gRPC endpoint, or a gRPC target such as dns:///triton:8001 (got "${tritonUrl}")`);
  }
  const config: Config = {
    port,
    host: r.str('HOST', '0.0.0.0'),
    databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: r.url('REDIS_URL', ['redis:', 'rediss:']),
    tritonUrl: tritonUrl?.replace(/^grpc:\/\//, ''),
    tritonModelName: r.str('TRITON_MODEL_NAME', modelName),
    tritonModelVersion: r.str('TRITON_MODEL_VERSION', ''),
    dataDir,
    publicBaseUrl: (r.url('PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    logLevel: r.oneOf('LOG_LEVEL', 'info', LOG_LEVELS),

    modelRepository,
    modelName,
    modelCatalog: path.resolve(r.str('MODEL_CATALOG', path.join(modelRepository, modelName, 'catalog.json'))),
    scoreThreshold: r.num('SCORE_THRESHOLD', 0.3, 0, 1),
    nmsIou: r.num('NMS_IOU', 0.5, 0, 1),
    inferenceThreads: r.int('INFERENCE_THREADS', os.availableParallelism(), 1, 256),

    syncTimeoutMs: r.int('SYNC_TIMEOUT_MS', 29_000, 100, 600_000),
    batchConcurrency: r.int('BATCH_CONCURRENCY', 4, 1, 10),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 15 * MB, 1024),
    imageMaxBase64Bytes: r.int('IMAGE_MAX_BASE64_BYTES', 10 * MB, 1),
    imageMaxPixels: r.int('IMAGE_MAX_PIXELS', 40_000_000, 1),
    imageFetchAllowCidrs: r.cidrs('IMAGE_FETCH_ALLOW_CIDRS'),
    imageFetchTimeoutMs: r.int('IMAGE_FETCH_TIMEOUT_MS', 10_000, 100),
    imageFetchMaxBytes: r.int('IMAGE_FETCH_MAX_BYTES', 10 * MB, 1),
    imageFetchMaxRedirects: r.int('IMAGE_FETCH_MAX_REDIRECTS', 3, 0, 10),
    imageUrlSecret: r.optional('IMAGE_URL_SECRET'),
    imageUrlTtlSeconds: r.int('IMAGE_URL_TTL_SECONDS', 7 * 24 * 3600, 1),

    rateLimitPerMinute: r.int('RATE_LIMIT_PER_MINUTE', 10, 1),
    lookupRateLimitPerMinute: r.int('LOOKUP_RATE_LIMIT_PER_MINUTE', 600, 1),
    defaultMonthlyQuota: r.int('DEFAULT_MONTHLY_QUOTA', 10_000, 0),

    metricsPort: r.optional('METRICS_PORT') === undefined ? undefined : r.int('METRICS_PORT', 9464, 1, 65535),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 30_000, 0),

    httpHeadersTimeoutMs: r.int('HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    httpRequestTimeoutMs: r.int('HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000),
    httpKeepAliveTimeoutMs: r.int('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 100, 3_600_000),
    httpSocketTimeoutMs: 0, // below: its default follows SYNC_TIMEOUT_MS
    httpMaxConnections: r.int('HTTP_MAX_CONNECTIONS', 1000, 1, 1_000_000),
    httpMaxInFlightPerClient: r.int('HTTP_MAX_IN_FLIGHT_PER_CLIENT', 32, 0, 1_000_000),
    trustProxy: trustProxyFrom(r),

    detectConcurrency: r.int('DETECT_CONCURRENCY', os.availableParallelism(), 1, 256),
    detectQueueLength: r.int('DETECT_QUEUE_LENGTH', Math.max(8, 4 * os.availableParallelism()), 0, 100_000),
  };
  // No bytes flow while a request is processed, so the inactivity cut must wait past the sync limit.
  config.httpSocketTimeoutMs = r.int('HTTP_SOCKET_TIMEOUT_MS', config.syncTimeoutMs + 30_000, 1000, 3_600_000);
  if (config.httpSocketTimeoutMs <= config.syncTimeoutMs) {
    r.problems.push(`HTTP_SOCKET_TIMEOUT_MS (${config.httpSocketTimeoutMs}) must be above SYNC_TIMEOUT_MS (${config.syncTimeoutMs})`);
  }
  if (config.httpHeadersTimeoutMs > config.httpRequestTimeoutMs) {
    r.problems.push(`HTTP_HEADERS_TIMEOUT_MS (${config.httpHeadersTimeoutMs}) must not be above HTTP_REQUEST_TIMEOUT_MS (${config.httpRequestTimeoutMs})`);
  }
  if (r.problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${r.problems.join('\n  - ')}`);
  }
  return Object.freeze(config);
}
