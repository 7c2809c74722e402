/**
 * The service's settings: SETTINGS is the one list of them. Each entry gives the variable's
 * name, how it is parsed, its default and what it means; from it come the Config type,
 * loadConfig (src/config.ts), the README's configuration table (`npm run generate`,
 * checked by test/config.test.ts), the environment the Kubernetes operator gives the API
 * pods (`pod`) and, for settings an SRE sets on the RecognitionService, the CRD field's
 * bounds and default (`crd`).
 *
 * A declaration, read by no one at import: the API's config loader (src/config.ts) and the
 * operator (src/operator) both import it, and the operator never imports the loader.
 */
import os from 'node:os';
import path from 'node:path';

export type Env = Record<string, string | undefined>;

/** Reads the variables of one environment, collecting every problem (loadConfig reports them all at once). */
export class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  number(name: string, fallback: number, min: number, max: number, integer: boolean): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    // An integer is written in decimal digits: Number() alone would take "1e1", "0x1A" or " 5".
    const written = integer ? /^-?\d+$/.test(raw) && Number.isInteger(n) : Number.isFinite(n);
    if (!written || n < min || n > max) {
      this.problems.push(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  }
}

/**
 * Where the operator takes a setting's value for the API pods: the field of the same name
 * in spec.api ('spec'), a Secret named by a spec.api field ({ secretRef }), or computed by
 * the operator itself ('operator', see src/operator/desired/api.ts; it may still leave it unset
 * where the API's default is right). No `pod`: left unset.
 */
export type PodSource = 'spec' | 'operator' | { secretRef: string } | StorageSecretKey;

/**
 * A key of Triton's storage Secret (spec.triton.storageSecretRef), given to the API pods only
 * when they read the catalog from that s3:// model repository (src/operator/desired/catalog.ts).
 */
export interface StorageSecretKey {
  storageSecretKey: string;
  /** The Secret may lack the key (a session token, a region). */
  optional?: boolean;
}

export interface Setting<T> {
  readonly env: string;
  /** The README's "Meaning" column. */
  readonly doc: string;
  /** The README's "Default" column (Markdown). */
  readonly defaultDoc: string;
  /** Parses the variable; `earlier` holds the settings listed before this one. */
  readonly read: (r: Reader, earlier: Readonly<Record<string, unknown>>) => T;
  readonly pod?: PodSource;
  /** JSON Schema of the matching spec.api field of the CRD. */
  readonly crd?: Readonly<Record<string, unknown>>;
}

interface Common {
  pod?: PodSource;
  defaultDoc?: string;
}

const code = (v: unknown) => `\`${String(v)}\``;
const MB = 1024 * 1024;
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function int(env: string, doc: string, o: Common & { default: number; min: number; max?: number; crd?: boolean }): Setting<number> {
  const max = o.max ?? UNBOUNDED;
  return {
    env,
    doc,
    defaultDoc: o.defaultDoc ?? code(o.default),
    pod: o.pod,
    read: (r) => r.number(env, o.default, o.min, max, true),
    ...(o.crd && {
      crd: { type: 'integer', minimum: o.min, ...(max !== UNBOUNDED && { maximum: max }), default: o.default, description: `${doc} (${env}).` },
    }),
  };
}

function optionalInt(env: string, doc: string, o: Common & { min: number; max: number; unset: string }): Setting<number | undefined> {
  return {
    env,
    doc,
    defaultDoc: o.unset,
    pod: o.pod,
    read: (r) => (r.optional(env) === undefined ? undefined : r.number(env, 0, o.min, o.max, true)),
  };
}

function num(env: string, doc: string, o: Common & { default: number; min: number; max: number }): Setting<number> {
  return { env, doc, defaultDoc: o.defaultDoc ?? code(o.default), pod: o.pod, read: (r) => r.number(env, o.default, o.min, o.max, false) };
}

/** A string; `fallback` may depend on settings listed earlier. */
function str(
  env: string,
  doc: string,
  o: Common & { default: string | ((earlier: Readonly<Record<string, unknown>>) => string); map?: (v: string) => string },
): Setting<string> {
  const map = o.map ?? ((v: string) => v);
  return {
    env,
    doc,
    defaultDoc: o.defaultDoc ?? (typeof o.default === 'string' ? (o.default === '' ? 'empty' : code(o.default)) : '?'),
    pod: o.pod,
    read: (r, earlier) => map(r.optional(env) ?? (typeof o.default === 'string' ? o.default : o.default(earlier))),
  };
}

/** The CRD's patterns (src/operator/api/schema.ts): what the operator writes, and nothing else. */
const MODEL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A catalog is a file (resolved to an absolute path) or an s3://bucket/key object. */
function catalogLocation(r: Reader, env: string, raw: string): string {
  if (!raw.startsWith('s3://')) return path.resolve(raw);
  if (!S3_OBJECT.test(raw)) r.problems.push(`${env} must be a file or s3://bucket/key (got "${raw}")`);
  return raw;
}
const MODEL_VERSION = /^([1-9][0-9]*)?$/;

/** A Triton model version: a positive integer without leading zeros, or empty for the server's latest. */
function modelVersion(env: string, doc: string, o: Common = {}): Setting<string> {
  return {
    env,
    doc,
    defaultDoc: 'empty',
    pod: o.pod,
    read: (r) => {
      const v = r.optional(env) ?? '';
      if (!MODEL_VERSION.test(v) || v.length > 19) {
        r.problems.push(`${env} must be a model version, a positive integer such as 2, or empty for the latest (got "${v}")`);
        return '';
      }
      return v;
    },
  };
}

function optionalStr(env: string, doc: string, o: Common & { unset: string }): Setting<string | undefined> {
  return { env, doc, defaultDoc: o.unset, pod: o.pod, read: (r) => r.optional(env) };
}

function oneOf<const T extends string>(env: string, doc: string, allowed: readonly T[], o: Common & { default: T; crd?: boolean }): Setting<T> {
  return {
    env,
    doc,
    defaultDoc: o.defaultDoc ?? code(o.default),
    pod: o.pod,
    read: (r) => {
      const raw = r.optional(env);
      if (raw === undefined) return o.default;
      if (!(allowed as readonly string[]).includes(raw)) {
        r.problems.push(`${env} must be one of ${allowed.join(', ')} (got "${raw}")`);
        return o.default;
      }
      return raw as T;
    },
    ...(o.crd && { crd: { type: 'string', enum: [...allowed], default: o.default, description: `${doc} (${env}).` } }),
  };
}

/** A setting with a check against settings read before it. */
function withCheck<T>(setting: Setting<T>, check: (value: T, r: Reader, earlier: Readonly<Record<string, unknown>>) => void): Setting<T> {
  return {
    ...setting,
    read: (r, earlier) => {
      const value = setting.read(r, earlier);
      check(value, r, earlier);
      return value;
    },
  };
}

function url(env: string, doc: string, protocols: string[], o: Common & { unset: string }): Setting<string | undefined> {
  return {
    env,
    doc,
    defaultDoc: o.unset,
    pod: o.pod,
    read: (r) => {
      const raw = r.optional(env);
      if (raw === undefined) return undefined;
      try {
        if (!protocols.includes(new URL(raw).protocol)) throw new Error('scheme');
      } catch {
        r.problems.push(`${env} must be a URL with scheme ${protocols.join(' or ')} (got "${raw}")`);
      }
      return raw;
    },
  };
}

function bool(env: string, doc: string, o: Common & { default: boolean; crd?: boolean }): Setting<boolean> {
  return {
    env,
    doc,
    defaultDoc: o.defaultDoc ?? code(o.default),
    pod: o.pod,
    read: (r) => {
      const raw = r.optional(env);
      if (raw === undefined) return o.default;
      if (raw !== 'true' && raw !== 'false') {
        r.problems.push(`${env} must be true or false (got "${raw}")`);
        return o.default;
      }
      return raw === 'true';
    },
    ...(o.crd && { crd: { type: 'boolean', default: o.default, description: `${doc} (${env}).` } }),
  };
}

function cidrs(env: string, doc: string): Setting<string[]> {
  return {
    env,
    doc,
    defaultDoc: 'empty',
    read: (r) => {
      const raw = r.optional(env);
      if (raw === undefined) return [];
      const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
      for (const c of list) {
        if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c)) r.problems.push(`${env}: "${c}" is not a CIDR such as 10.0.0.0/8`);
      }
      return list;
    },
  };
}

/** s3://bucket/key: a bucket name as S3 allows it and a non-empty key. */
const S3_OBJECT = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\/[^/].*$/;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const DETECTION_PROFILES = ['fast', 'accurate'] as const;
export type DetectionProfile = (typeof DETECTION_PROFILES)[number];
/** The accurate profile's default: a fused confidence is discounted by the models that missed the box (docs/model.md). */
const ACCURATE_SCORE_THRESHOLD = 0.2;

/** Every setting, in the order they are read (a default may use the ones above it). */
export const SETTINGS = {
  port: int('PORT', 'where the API listens', { default: 8080, min: 0, max: 65535, pod: 'spec' }),
  host: str('HOST', 'the address the API binds', { default: '0.0.0.0', pod: 'operator' }),
  databaseUrl: url('DATABASE_URL', '`postgres://user:pass@host:5432/db`', ['postgres:', 'postgresql:'], {
    unset: 'unset: embedded PostgreSQL under `DATA_DIR`',
    pod: { secretRef: 'databaseUrlSecretRef' },
  }),
  redisUrl: url('REDIS_URL', '`redis://host:6379`; rate-limit windows shared by replicas', ['redis:', 'rediss:'], {
    unset: 'unset: in-process limiter',
    pod: { secretRef: 'redisUrlSecretRef' },
  }),
  tritonUrl: {
    env: 'TRITON_URL',
    doc: "`host:8001`, Triton's gRPC endpoint (`dns:///svc:8001` for round-robin over pods)",
    defaultDoc: 'unset: in-process ONNX Runtime',
    pod: 'operator',
    read: (r: Reader): string | undefined => {
      const raw = r.optional('TRITON_URL');
      if (raw === undefined) return undefined;
      const target = raw.replace(/^grpc:\/\//, '');
      if (!/^[\w.-]+:\d+$|^\[[0-9a-fA-F:]+\]:\d+$|^(dns|ipv4|ipv6):/.test(target)) {
        r.problems.push(`TRITON_URL must be host:port of Triton's gRPC endpoint, or a gRPC target such as dns:///triton:8001 (got "${raw}")`);
      }
      return target;
    },
  } satisfies Setting<string | undefined>,
  dataDir: str('DATA_DIR', 'embedded database, stored images, the image-link secret', { default: './.data', map: (v) => path.resolve(v), pod: 'operator' }),
  modelRepository: str('MODEL_REPOSITORY', 'the prepared Triton model repository', { default: './model-repository', map: (v) => path.resolve(v) }),
  modelName: str('MODEL_NAME', 'the model in that repository', { default: 'centernet', pod: 'operator' }),
  tritonModelName: str('TRITON_MODEL_NAME', 'the model Triton serves', {
    default: (c) => String(c.modelName),
    defaultDoc: '`MODEL_NAME`',
    pod: 'operator',
  }),
  tritonModelVersion: modelVersion('TRITON_MODEL_VERSION', "the model version Triton serves; empty: the server's latest", { pod: 'operator' }),
  publicBaseUrl: {
    env: 'PUBLIC_BASE_URL',
    doc: 'base of the signed `image_url` links',
    defaultDoc: '`http://localhost:$PORT`',
    pod: 'operator',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string =>
      (url('PUBLIC_BASE_URL', '', ['http:', 'https:'], { unset: '' }).read(r, c) ?? `http://localhost:${String(c.port)}`).replace(/\/+$/, ''),
  } satisfies Setting<string>,
  logLevel: oneOf('LOG_LEVEL', 'log level: `fatal` … `trace`, `silent`', LOG_LEVELS, { default: 'info', pod: 'spec', crd: true }),

  modelCatalog: {
    env: 'MODEL_CATALOG',
    doc: 'class index → label and product external id, replaceable: a file or `s3://bucket/key` (read in the background, unready until read; docs/model.md)',
    defaultDoc: '`<repository>/<model>/catalog.json`',
    pod: 'operator',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string => {
      const raw = r.optional('MODEL_CATALOG');
      if (raw === undefined) return path.join(String(c.modelRepository), String(c.modelName), 'catalog.json');
      return catalogLocation(r, 'MODEL_CATALOG', raw);
    },
  } satisfies Setting<string>,
  // An s3:// catalog lives in the model repository, which need not be the image store's
  // S3: its own endpoint and credentials, never taken from S3_* (docs/model.md).
  modelCatalogS3Endpoint: url('MODEL_CATALOG_S3_ENDPOINT', 'endpoint of an `s3://` catalog (MinIO, Ceph RGW); `S3_ENDPOINT` does not apply to it', ['http:', 'https:'], {
    unset: "AWS's endpoint for the bucket's region",
  }),
  modelCatalogS3Region: str('MODEL_CATALOG_S3_REGION', "region of an `s3://` catalog's bucket (AWS redirects to the bucket's own)", {
    default: 'us-east-1',
    pod: { storageSecretKey: 'AWS_DEFAULT_REGION', optional: true },
  }),
  modelCatalogS3ForcePathStyle: bool('MODEL_CATALOG_S3_FORCE_PATH_STYLE', '`true`: path-style URLs for an `s3://` catalog (MinIO, Ceph)', { default: false }),
  modelCatalogS3AccessKeyId: optionalStr('MODEL_CATALOG_S3_ACCESS_KEY_ID', "key id for an `s3://` catalog; the operator takes it from Triton's `storageSecretRef`", {
    unset: 'the AWS chain (`AWS_ACCESS_KEY_ID`…, IRSA)',
    pod: { storageSecretKey: 'AWS_ACCESS_KEY_ID' },
  }),
  modelCatalogS3SecretAccessKey: {
    env: 'MODEL_CATALOG_S3_SECRET_ACCESS_KEY',
    doc: '… its secret key (both or neither)',
    defaultDoc: 'unset',
    pod: { storageSecretKey: 'AWS_SECRET_ACCESS_KEY' },
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string | undefined => {
      const v = r.optional('MODEL_CATALOG_S3_SECRET_ACCESS_KEY');
      if ((v === undefined) !== (c.modelCatalogS3AccessKeyId === undefined)) {
        r.problems.push('MODEL_CATALOG_S3_ACCESS_KEY_ID and MODEL_CATALOG_S3_SECRET_ACCESS_KEY are set together or not at all');
      }
      return v;
    },
  } satisfies Setting<string | undefined>,
  modelCatalogS3SessionToken: optionalStr('MODEL_CATALOG_S3_SESSION_TOKEN', '… and its session token, for temporary credentials', {
    unset: 'unset',
    pod: { storageSecretKey: 'AWS_SESSION_TOKEN', optional: true },
  }),
  // A canary (docs/triton.md): a share of requests, chosen by external_id, goes to another
  // model or version on the same Triton. Read after the stable model's settings they default to.
  canaryWeight: {
    env: 'CANARY_WEIGHT',
    pod: 'operator',
    doc: 'percent of requests (by a hash of `external_id`) sent to the canary model; `0`: no canary. Needs `TRITON_URL`',
    defaultDoc: '`0`',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): number => {
      const weight = r.number('CANARY_WEIGHT', 0, 0, 100, true);
      if (weight > 0 && c.tritonUrl === undefined) {
        r.problems.push('CANARY_WEIGHT needs TRITON_URL: the embedded ONNX Runtime serves one model, so a canary runs only against Triton');
      }
      return weight;
    },
  } satisfies Setting<number>,
  canaryModelName: {
    env: 'CANARY_MODEL_NAME',
    pod: 'operator',
    doc: 'the canary model Triton serves',
    defaultDoc: '`TRITON_MODEL_NAME`',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string => {
      const raw = r.optional('CANARY_MODEL_NAME');
      // The CRD's model-name pattern: the name is part of the routing hash (and, like the
      // stable model's, a label value of the model_* series).
      if (raw !== undefined && !MODEL_NAME.test(raw)) r.problems.push(`CANARY_MODEL_NAME must be a model name of letters, digits, '_', '.' and '-' (got "${raw}")`);
      return raw ?? String(c.tritonModelName);
    },
  } satisfies Setting<string>,
  canaryModelVersion: {
    env: 'CANARY_MODEL_VERSION',
    pod: 'operator',
    doc: "the canary model's version; empty: the server's latest",
    defaultDoc: 'empty',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string => {
      const version = modelVersion('CANARY_MODEL_VERSION', '').read(r, c);
      const sameModel = Number(c.canaryWeight) > 0 && c.canaryModelName === c.tritonModelName;
      // With an empty stable version (Triton's latest) a new canary version, once loaded, is
      // the latest: both sides would be the canary, and the stable model be gone unnoticed.
      if (sameModel && c.tritonModelVersion === '') {
        r.problems.push(
          `a canary of the same model (CANARY_MODEL_NAME "${String(c.canaryModelName)}") needs TRITON_MODEL_VERSION: with it empty the stable side is whatever version is latest, possibly the canary's`,
        );
      } else if (sameModel && version === c.tritonModelVersion) {
        // The same model and version on both sides would make every comparison meaningless.
        r.problems.push(
          `the canary (CANARY_MODEL_NAME "${String(c.canaryModelName)}", CANARY_MODEL_VERSION "${version}") is the stable model itself (TRITON_MODEL_NAME, TRITON_MODEL_VERSION): give it another version or model`,
        );
      }
      return version;
    },
  } satisfies Setting<string>,
  canaryModelCatalog: {
    env: 'CANARY_MODEL_CATALOG',
    pod: 'operator',
    doc: "the canary model's catalog, a file or `s3://bucket/key` as `MODEL_CATALOG`",
    defaultDoc: '`MODEL_CATALOG` for a version of the same model',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string => {
      const raw = r.optional('CANARY_MODEL_CATALOG');
      if (raw === undefined) {
        // Another model's labels would be silently wrong: a canary of another model brings its own.
        if (Number(c.canaryWeight) > 0 && c.canaryModelName !== c.tritonModelName) {
          r.problems.push(`CANARY_MODEL_CATALOG is required when the canary is another model ("${String(c.canaryModelName)}", not "${String(c.tritonModelName)}")`);
        }
        return String(c.modelCatalog);
      }
      return catalogLocation(r, 'CANARY_MODEL_CATALOG', raw);
    },
  } satisfies Setting<string>,
  detectionProfile: {
    ...withCheck(oneOf('DETECTION_PROFILE', '`fast`: the model alone; `accurate`: the model and `ENSEMBLE_MODELS` fused by weighted box fusion (docs/model.md)', DETECTION_PROFILES, { default: 'fast', pod: 'spec' }), (profile, r, c) => {
      if (profile === 'accurate' && Number(c.canaryWeight) > 0) r.problems.push('DETECTION_PROFILE=accurate cannot run with a canary (CANARY_WEIGHT): roll the model out with the fast profile');
    }),
    // No default in the CRD: a resource that does not choose keeps its pod template (an operator upgrade rolls nothing).
    crd: {
      type: 'string',
      enum: [...DETECTION_PROFILES],
      description: '`fast`: the Triton model alone; `accurate`: it and api.ensembleModels fused by weighted box fusion (docs/model.md) (DETECTION_PROFILE; unset: fast).',
    },
  },
  ensembleModels: {
    env: 'ENSEMBLE_MODELS',
    doc: 'the `accurate` profile: models fused with `MODEL_NAME`, comma-separated, each with its catalog at `<repository>/<model>/catalog.json`',
    defaultDoc: '`ssdlite`',
    pod: 'spec',
    crd: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 128, pattern: MODEL_NAME.source },
      minItems: 1,
      maxItems: 3,
      description: "The accurate profile's models fused with triton.modelName, served by the same Triton; their catalogs are read from the API image's model repository (ENSEMBLE_MODELS; unset: ssdlite).",
    },
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string[] => {
      const list = (r.optional('ENSEMBLE_MODELS') ?? 'ssdlite').split(',').map((s) => s.trim()).filter(Boolean);
      if (c.detectionProfile !== 'accurate') return list;
      const own = c.tritonUrl === undefined ? c.modelName : c.tritonModelName;
      if (list.length === 0 || list.length > 3 || list.some((m) => !MODEL_NAME.test(m))) r.problems.push(`ENSEMBLE_MODELS must be one to three model names, comma-separated (got "${list.join(',')}")`);
      else if (list.includes(String(own)) || new Set(list).size < list.length) r.problems.push(`ENSEMBLE_MODELS must name models other than MODEL_NAME ("${String(own)}") and each once (got "${list.join(',')}")`);
      return list;
    },
  } satisfies Setting<string[]>,
  scoreThreshold: {
    env: 'SCORE_THRESHOLD',
    doc: 'detection score threshold, for the classes without their own in the catalog',
    defaultDoc: '`0.3`; `0.2` with `DETECTION_PROFILE=accurate`',
    // A fused confidence is discounted by the models that missed the box: its scale is lower.
    read: (r: Reader, c: Readonly<Record<string, unknown>>): number => r.number('SCORE_THRESHOLD', c.detectionProfile === 'accurate' ? ACCURATE_SCORE_THRESHOLD : 0.3, 0, 1, false),
  } satisfies Setting<number>,
  nmsIou: num('NMS_IOU', 'class-aware NMS overlap', { default: 0.5, min: 0, max: 1 }),
  inferenceThreads: {
    env: 'INFERENCE_THREADS',
    doc: 'ONNX Runtime threads (per model: `DETECTION_PROFILE=accurate` runs a session per model)',
    defaultDoc: 'all cores',
    read: (r: Reader): number => r.number('INFERENCE_THREADS', os.availableParallelism(), 1, 256, true),
  } satisfies Setting<number>,
  inferenceMaxBatch: int('INFERENCE_MAX_BATCH', 'embedded backend: calls already waiting when the session frees up run as one batch of up to this many images (1: one at a time)', { default: 1, min: 1, max: 64 }),

  syncTimeoutMs: int('SYNC_TIMEOUT_MS', "sync deadline (and each batch image's), in ms; past it 408", {
    default: 29_000, min: 100, max: 600_000, pod: 'spec', crd: true,
  }),
  // Read after SYNC_TIMEOUT_MS, which it must stay below.
  canaryReserveMs: {
    env: 'CANARY_RESERVE_MS',
    doc: "of a request routed to the canary, the part of its deadline kept for the stable model, in ms: the canary's own time runs out that much earlier, and the stable model answers in what is left",
    defaultDoc: '`5000`',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): number => {
      const v = r.number('CANARY_RESERVE_MS', 5_000, 0, 600_000, true);
      if (Number(c.canaryWeight) > 0 && v >= Number(c.syncTimeoutMs)) {
        r.problems.push(`CANARY_RESERVE_MS (${v}) must be below SYNC_TIMEOUT_MS (${String(c.syncTimeoutMs)}): the canary would never get any time`);
      }
      return v;
    },
  } satisfies Setting<number>,
  batchConcurrency: int('BATCH_CONCURRENCY', 'images of one batch processed at a time', { default: 4, min: 1, max: 10 }),
  bodyLimitBytes: int('BODY_LIMIT_BYTES', 'larger bodies get 413', { default: 15 * MB, min: 1024, defaultDoc: '15 MiB' }),
  imageMaxBase64Bytes: int('IMAGE_MAX_BASE64_BYTES', 'encoded base64 limit', { default: 10 * MB, min: 1, defaultDoc: '10 MiB' }),
  imageMaxPixels: int('IMAGE_MAX_PIXELS', 'decoded images above are refused before decoding', { default: 40_000_000, min: 1 }),
  imageFetchAllowCidrs: cidrs('IMAGE_FETCH_ALLOW_CIDRS', 'private ranges URL fetching may reach (`10.0.0.0/8,fd00::/8`)'),
  imageFetchTimeoutMs: int('IMAGE_FETCH_TIMEOUT_MS', 'URL download time limit, in ms', { default: 10_000, min: 100 }),
  imageFetchMaxBytes: int('IMAGE_FETCH_MAX_BYTES', 'URL download size limit', { default: 10 * MB, min: 1, defaultDoc: '10 MiB' }),
  imageFetchMaxRedirects: int('IMAGE_FETCH_MAX_REDIRECTS', 'redirects a URL download follows', { default: 3, min: 0, max: 10 }),
  imageUrlSecret: optionalStr('IMAGE_URL_SECRET', 'HMAC key of signed image links', {
    unset: 'generated once, kept under `DATA_DIR`',
    pod: { secretRef: 'imageUrlSecretRef' },
  }),
  imageUrlTtlSeconds: int('IMAGE_URL_TTL_SECONDS', 'lifetime of signed image links, in seconds', { default: 7 * 24 * 3600, min: 1, defaultDoc: '7 days' }),
  imageStore: {
    env: 'IMAGE_STORE',
    doc: 'where processed images are kept: `local` (`DATA_DIR/images`) or `s3://bucket/prefix` (shared by every replica; see docs/images.md)',
    defaultDoc: '`local`',
    pod: 'operator',
    read: (r: Reader): string => {
      const raw = r.optional('IMAGE_STORE') ?? 'local';
      if (raw !== 'local' && !/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(raw)) {
        r.problems.push(`IMAGE_STORE must be "local" or s3://bucket/prefix (got "${raw}")`);
      }
      return raw;
    },
  } satisfies Setting<string>,
  s3Endpoint: url('S3_ENDPOINT', 'S3 endpoint for MinIO, Ceph RGW, GCS (`https://storage.googleapis.com`); credentials: the AWS chain (`AWS_ACCESS_KEY_ID`…, IRSA)', ['http:', 'https:'], {
    unset: "AWS's endpoint for `S3_REGION`",
    pod: 'operator',
  }),
  s3Region: str('S3_REGION', 'S3 region', { default: 'us-east-1', pod: 'operator' }),
  s3ForcePathStyle: bool('S3_FORCE_PATH_STYLE', '`true`: `endpoint/bucket/key` URLs (MinIO, Ceph) instead of `bucket.endpoint/key`', {
    default: false,
    pod: 'operator',
  }),
  imageUrlMode: {
    env: 'IMAGE_URL_MODE',
    doc: "what `image_url` in results is: `api`, the API's own signed link (streamed from the store, 410 after retention); `presigned`, a presigned S3 GET link to the bucket (needs `IMAGE_STORE=s3://…`; see docs/images.md)",
    defaultDoc: '`api`',
    pod: 'operator',
    read: (r: Reader): 'api' | 'presigned' => {
      const raw = r.optional('IMAGE_URL_MODE') ?? 'api';
      if (raw !== 'api' && raw !== 'presigned') {
        r.problems.push(`IMAGE_URL_MODE must be one of api, presigned (got "${raw}")`);
        return 'api';
      }
      if (raw === 'presigned' && !(r.optional('IMAGE_STORE') ?? '').startsWith('s3://')) {
        r.problems.push('IMAGE_URL_MODE=presigned needs IMAGE_STORE=s3://bucket/prefix: only an S3 store can presign links');
      }
      // SigV4 presigned links live 7 days at most; a longer TTL would be cut silently.
      if (raw === 'presigned' && Number(r.optional('IMAGE_URL_TTL_SECONDS') ?? 0) > 7 * 24 * 3600) {
        r.problems.push('IMAGE_URL_MODE=presigned allows IMAGE_URL_TTL_SECONDS up to 604800 (7 days, the longest an S3 presigned link lives)');
      }
      return raw;
    },
  } satisfies Setting<'api' | 'presigned'>,
  s3PublicEndpoint: url('S3_PUBLIC_ENDPOINT', 'with `IMAGE_URL_MODE=presigned`: the endpoint clients reach the bucket by, put into presigned links', ['http:', 'https:'], {
    unset: '`S3_ENDPOINT`',
    pod: 'operator',
  }),
  imageRetentionDays: int('IMAGE_RETENTION_DAYS', 'stored images older than this are deleted (links then answer 410); `0` keeps them forever', {
    default: 30, min: 0, max: 36_500, pod: 'spec', crd: true,
  }),

  rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 'per key, sync + batch, rolling 60 s (per-key override: `--rate-limit`)', {
    default: 10, min: 1, pod: 'spec', crd: true,
  }),
  lookupRateLimitPerMinute: int('LOOKUP_RATE_LIMIT_PER_MINUTE', 'per key, lookup + feedback, rolling 60 s', {
    default: 600, min: 1, pod: 'spec', crd: true,
  }),
  defaultMonthlyQuota: int('DEFAULT_MONTHLY_QUOTA', 'per key, calendar month in UTC (per-key: `--quota`)', {
    default: 10_000, min: 0, pod: 'spec', crd: true,
  }),

  metricsPort: optionalInt('METRICS_PORT', 'also serve `/metrics` on this port', { min: 1, max: 65535, unset: 'unset', pod: 'spec' }),
  shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 'how long SIGTERM waits for in-flight requests, in ms', { default: 30_000, min: 0, pod: 'operator' }),

  consoleEnabled: bool('CONSOLE_ENABLED', 'the web console and its API under `/console` (docs/console.md)', { default: true, pod: 'spec', crd: true }),
  consoleAccessTtlSeconds: int('CONSOLE_ACCESS_TTL_SECONDS', 'lifetime of a console access token, in seconds', { default: 15 * 60, min: 1, max: 24 * 3600 }),
  // ASVS 3.3.2 (level 2): a session ends 12 hours after sign-in or after 30 minutes without activity.
  consoleSessionTtlSeconds: int('CONSOLE_SESSION_TTL_SECONDS', 'absolute lifetime of a console session from sign-in, in seconds; refreshing never extends it (lowering it ends longer sessions too)', {
    default: 12 * 3600, min: 60, max: 365 * 24 * 3600, defaultDoc: '12 hours', pod: 'spec', crd: true,
  }),
  consoleSessionIdleSeconds: int('CONSOLE_SESSION_IDLE_SECONDS', 'a console session with no activity (a refresh, or an access token used) for this long ends, in seconds', {
    default: 30 * 60, min: 60, max: 30 * 24 * 3600, defaultDoc: '30 minutes', pod: 'spec', crd: true,
  }),
  // Invitation e-mail (src/console/mail.ts, docs/console.md). The URL carries the SMTP
  // credentials, a secret: the operator sets neither (no `pod`); give them to the pods with
  // spec.api.env and a secretKeyRef.
  smtpUrl: {
    env: 'SMTP_URL',
    doc: '`smtps://user:pass@host:465` or `smtp://user:pass@host:587` (STARTTLS required, except to a loopback host): console invitations are e-mailed and their link is never shown to the inviting admin (docs/console.md)',
    defaultDoc: 'unset: the link is shown once to the inviting admin',
    read: (r: Reader): string | undefined => {
      const raw = r.optional('SMTP_URL');
      if (raw === undefined) return undefined;
      let ok: boolean;
      try {
        const u = new URL(raw);
        ok = (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '' && (u.pathname === '' || u.pathname === '/') && u.search === '';
      } catch {
        ok = false;
      }
      // Never echo the value: it holds the password.
      if (!ok) r.problems.push('SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://[user:pass@]host[:port] (percent-encode special characters of the user and password)');
      return raw;
    },
  } satisfies Setting<string | undefined>,
  smtpFrom: {
    env: 'SMTP_FROM',
    doc: 'sender of console e-mail, `Recognition <no-reply@example.com>` or an address; needed with `SMTP_URL`',
    defaultDoc: 'unset',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): string | undefined => {
      const raw = r.optional('SMTP_FROM');
      if (raw !== undefined && (!/^[^\r\n]*@[^\r\n]*$/.test(raw) || raw.length > 320)) r.problems.push(`SMTP_FROM must be an e-mail address, or a name and <address> (got "${raw}")`);
      if (raw === undefined && c.smtpUrl !== undefined) r.problems.push('SMTP_FROM is required with SMTP_URL: the sender address of invitation e-mail');
      return raw;
    },
  } satisfies Setting<string | undefined>,
  // Slow and greedy clients (src/api/connection-limits.ts).
  httpHeadersTimeoutMs: int('HTTP_HEADERS_TIMEOUT_MS', 'a client must send its request headers within this, in ms', { default: 10_000, min: 100, max: 600_000 }),
  httpRequestTimeoutMs: {
    env: 'HTTP_REQUEST_TIMEOUT_MS',
    doc: '… and its whole request, headers and body, in ms',
    defaultDoc: '`60000`',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): number => {
      const v = r.number('HTTP_REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000, true);
      if (Number(c.httpHeadersTimeoutMs) > v) r.problems.push(`HTTP_HEADERS_TIMEOUT_MS (${String(c.httpHeadersTimeoutMs)}) must not be above HTTP_REQUEST_TIMEOUT_MS (${v})`);
      return v;
    },
  } satisfies Setting<number>,
  httpKeepAliveTimeoutMs: int('HTTP_KEEP_ALIVE_TIMEOUT_MS', "idle keep-alive connections close after this, in ms; keep it above the load balancer's idle timeout", {
    default: 65_000, min: 100, max: 3_600_000,
  }),
  httpSocketTimeoutMs: {
    env: 'HTTP_SOCKET_TIMEOUT_MS',
    doc: 'a connection with no traffic at all is closed after this, in ms; above the sync limit (no bytes flow while a request is processed)',
    defaultDoc: '`SYNC_TIMEOUT_MS` + 30000',
    read: (r: Reader, c: Readonly<Record<string, unknown>>): number => {
      const sync = Number(c.syncTimeoutMs);
      const v = r.number('HTTP_SOCKET_TIMEOUT_MS', sync + 30_000, 1000, 3_600_000, true);
      if (v <= sync) r.problems.push(`HTTP_SOCKET_TIMEOUT_MS (${v}) must be above SYNC_TIMEOUT_MS (${sync})`);
      return v;
    },
  } satisfies Setting<number>,
  httpMaxConnections: int('HTTP_MAX_CONNECTIONS', 'open connections at once; more are closed on arrival', { default: 1000, min: 1, max: 1_000_000 }),
  httpMaxInFlightPerClient: int('HTTP_MAX_IN_FLIGHT_PER_CLIENT', 'requests in flight per client address (0: no cap); more get 429 `TOO_MANY_IN_FLIGHT`', {
    default: 32, min: 0, max: 1_000_000,
  }),
  trustProxy: {
    env: 'TRUST_PROXY',
    doc: '`true`, a hop count, or proxy addresses/CIDRs: take the client address from `X-Forwarded-For`',
    defaultDoc: '`false`',
    read: (r: Reader): boolean | number | string => {
      const raw = r.optional('TRUST_PROXY');
      if (raw === undefined || raw === 'false') return false;
      if (raw === 'true') return true;
      if (/^\d+$/.test(raw)) return Number(raw);
      const list = raw.split(',').map((a) => a.trim()).filter(Boolean);
      for (const a of list) {
        if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a)) r.problems.push(`TRUST_PROXY: "${a}" is not an address or CIDR (or use true, false, or a hop count)`);
      }
      return list.join(',');
    },
  } satisfies Setting<boolean | number | string>,

  // Backpressure on decode and inference (src/recognition/capacity.ts).
  detectConcurrency: {
    env: 'DETECT_CONCURRENCY',
    doc: 'images decoded and inferred at once; decode memory stays below `IMAGE_MAX_PIXELS` × this (about 4 bytes a pixel)',
    defaultDoc: 'all cores',
    read: (r: Reader): number => r.number('DETECT_CONCURRENCY', os.availableParallelism(), 1, 256, true),
  } satisfies Setting<number>,
  detectQueueLength: {
    env: 'DETECT_QUEUE_LENGTH',
    doc: 'images waiting for a decode/inference slot; when full, 503 `SERVICE_OVERLOADED` with `Retry-After`',
    defaultDoc: 'max(8, 4 × cores)',
    read: (r: Reader): number => r.number('DETECT_QUEUE_LENGTH', Math.max(8, 4 * os.availableParallelism()), 0, 100_000, true),
  } satisfies Setting<number>,
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

export type Config = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]['read']> };
