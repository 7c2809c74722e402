/**
 * The RecognitionService custom resource (cv.recognition.io/v1alpha1): its OpenAPI schema,
 * written once here in TypeBox. From it come the TypeScript types (types.ts), the defaults
 * the operator applies (defaults.ts) and the CRD YAML in crds/ and the operator chart
 * (`npm run generate`; a test fails when the committed YAML differs).
 *
 * A field with a `default` is filled in by the API server (and by withDefaults), so the
 * generator leaves it out of the CRD's `required` list while its TypeScript type stays
 * required: the builders only ever see defaulted objects.
 */
import { Type, type Static, type TObject, type TSchema, type TUnsafe, type SchemaOptions } from '@sinclair/typebox';
import { SETTINGS, type Config, type Setting, type SettingName } from '../../settings.js';

/** A string limited to a fixed list, as Kubernetes writes it (`enum`, not `anyOf` of consts). */
function StringEnum<T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, type: 'string', enum: [...values] });
}

/** A string-keyed map (`additionalProperties`; Kubernetes rejects `patternProperties`). */
function StringMap<V extends TSchema>(value: V, options: SchemaOptions = {}): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>({ ...options, type: 'object', additionalProperties: value });
}

/** Free-form JSON passed through untouched (Kubernetes' own types: valueFrom, affinity...). */
function Opaque(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/** A CEL validation rule (x-kubernetes-validations). */
const rule = (rule: string, message: string) => ({ rule, message });

/**
 * A spec.api field that is also one of the API's settings (src/settings.ts): its bounds,
 * default and description come from that setting, so the two cannot drift apart.
 */
function settingField<K extends SettingName>(name: K): TUnsafe<Config[K]> {
  const s: Setting<unknown> = SETTINGS[name];
  if (!s.crd) throw new Error(`setting ${name} has no CRD form`);
  return Type.Unsafe<Config[K]>({ ...s.crd });
}

const SecretKeyRef = (key: string, description: string) =>
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 253 }),
      key: Type.String({ minLength: 1, default: key }),
    },
    { description },
  );

/** A resource quantity such as 500m, 2 or 4Gi (the pattern is Kubernetes' own). */
const Quantity = Type.Unsafe<string | number>({
  'x-kubernetes-int-or-string': true,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  pattern: String.raw`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
});

const Resources = (defaults: { requests: Record<string, string>; limits: Record<string, string> }) =>
  Type.Object(
    { requests: Type.Optional(StringMap(Quantity)), limits: Type.Optional(StringMap(Quantity)) },
    { default: defaults },
  );

const Replicas = (max: number, defaults: { min: number; max: number }, description?: string) =>
  Type.Object(
    {
      min: Type.Integer({ format: 'int32', minimum: 1, maximum: max, default: defaults.min }),
      max: Type.Integer({ format: 'int32', minimum: 1, maximum: max, default: defaults.max }),
    },
    { default: {}, ...(description && { description }) },
  );

const PullPolicy = StringEnum(['Always', 'IfNotPresent', 'Never']);

/** A model's directory name in the repository, as Triton's --load-model takes it. */
const ModelName = (options: SchemaOptions = {}) =>
  Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$', ...options });

/**
 * A Triton model version: the number of one of the model's version directories (Triton
 * ignores directories whose name is not a number or starts with 0), or '' for the newest.
 */
const ModelVersion = (options: SchemaOptions = {}) => Type.String({ maxLength: 19, pattern: '^([1-9][0-9]*)?$', ...options });

export const EnvVarSchema = Type.Object({
  name: Type.String({ minLength: 1, pattern: '^[-._a-zA-Z][-._a-zA-Z0-9]*$' }),
  value: Type.Optional(Type.String()),
  valueFrom: Type.Optional(Opaque()),
});

export const ApiSpecSchema = Type.Object(
  {
    image: Type.String({ minLength: 1, maxLength: 512 }),
    imagePullPolicy: Type.Optional(PullPolicy),
    replicas: Replicas(
      1000,
      { min: 2, max: 10 },
      'Without an HPA the Deployment runs min pods; with one (autoscaling.enabled and max > min) the HPA keeps between min and max. `kubectl scale` sets min (the scale subresource), so it is refused above max.',
    ),
    resources: Resources({ requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '1Gi' } }),
    env: Type.Optional(
      Type.Array(EnvVarSchema, {
        description: "Extra environment variables, added after the operator's own (same name wins).",
        maxItems: 100,
      }),
    ),
    databaseUrlSecretRef: SecretKeyRef('DATABASE_URL', 'Secret key holding DATABASE_URL (postgres://...).'),
    redisUrlSecretRef: Type.Optional(
      SecretKeyRef('REDIS_URL', 'Secret key holding REDIS_URL; without it each replica rate-limits on its own.'),
    ),
    imageUrlSecretRef: Type.Optional(
      SecretKeyRef(
        'IMAGE_URL_SECRET',
        'Secret key holding IMAGE_URL_SECRET, the HMAC key of signed image URLs; unset: the operator creates and owns a Secret <name>-api-image-url with a random key, shared by every replica.',
      ),
    ),
    imageStorage: Type.Optional(
      Type.Object(
        {
          s3: Type.Optional(
            Type.Object(
              {
                bucket: Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' }),
                prefix: Type.String({ maxLength: 512, default: 'images', pattern: '^[^\\s]*$' }),
                endpoint: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 1024, description: "S3 endpoint (MinIO, Ceph RGW, GCS); unset: AWS's for the region." })),
                region: Type.String({ minLength: 1, maxLength: 64, default: 'us-east-1' }),
                forcePathStyle: Type.Boolean({ default: false, description: 'Path-style URLs (MinIO, Ceph).' }),
                presignedUrls: Type.Boolean({
                  default: false,
                  description:
                    'image_url in results is a presigned S3 link clients download from the bucket directly (IMAGE_URL_MODE=presigned), instead of the API\'s own signed link.',
                }),
                publicEndpoint: Type.Optional(
                  Type.String({ pattern: '^https?://', maxLength: 1024, description: 'With presignedUrls: the endpoint clients reach the bucket by, when it differs from endpoint (S3_PUBLIC_ENDPOINT).' }),
                ),
                credentialsSecretRef: Type.Optional(
                  Type.Object(
                    { name: Type.String({ minLength: 1, maxLength: 253 }) },
                    { description: 'Secret whose keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) become the API\'s environment; without it the AWS chain (IRSA web identity) is used.' },
                  ),
                ),
              },
              { description: 'Images in an S3-compatible bucket shared by every API replica (IMAGE_STORE=s3://bucket/prefix).' },
            ),
          ),
          pvc: Type.Optional(
            Type.Object(
              { claimName: Type.String({ minLength: 1, maxLength: 253 }) },
              { description: 'An existing ReadWriteMany PersistentVolumeClaim mounted at DATA_DIR/images on every API pod.' },
            ),
          ),
        },
        {
          description: "Where the API keeps processed images. Needed whenever the API may run more than one replica: each pod's own disk is neither shared nor kept.",
          'x-kubernetes-validations': [rule('has(self.s3) != has(self.pvc)', 'api.imageStorage: set exactly one of s3 or pvc')],
        },
      ),
    ),
    imageRetentionDays: settingField('imageRetentionDays'),
    catalogConfigMapRef: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 253 }),
          key: Type.String({ minLength: 1, maxLength: 253, default: 'catalog.json' }),
          canaryKey: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 253,
              description:
                "Key of the same ConfigMap holding the catalog of spec.canary's model (CANARY_MODEL_CATALOG); required while the canary is another model than triton.modelName.",
            }),
          ),
        },
        {
          description:
            'ConfigMap key holding the model catalog (class index -> label, product external id) that belongs to the model Triton serves; mounted read-only and named by MODEL_CATALOG. Unset - the API reads <storageUri>/<modelName>/catalog.json from the s3:// or pvc:// model repository (required for gs://).',
        },
      ),
    ),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 8080 }),
    metricsPort: Type.Integer({ minimum: 1, maximum: 65535, default: 9464 }),
    syncTimeoutMs: settingField('syncTimeoutMs'),
    rateLimitPerMinute: settingField('rateLimitPerMinute'),
    lookupRateLimitPerMinute: settingField('lookupRateLimitPerMinute'),
    defaultMonthlyQuota: settingField('defaultMonthlyQuota'),
    logLevel: settingField('logLevel'),
    detectionProfile: Type.Optional(settingField('detectionProfile')),
    ensembleModels: Type.Optional(settingField('ensembleModels')),
    publicBaseUrl: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'Public address of the API (signed image URLs); defaults to the in-cluster Service URL.',
      }),
    ),
    serviceType: StringEnum(['ClusterIP', 'NodePort', 'LoadBalancer'], { default: 'ClusterIP' }),
    consoleEnabled: settingField('consoleEnabled'),
    consoleSessionTtlSeconds: settingField('consoleSessionTtlSeconds'),
    consoleSessionIdleSeconds: settingField('consoleSessionIdleSeconds'),
  },
  {
    description: 'The REST API (node dist/server.js).',
    'x-kubernetes-validations': [
      rule('self.replicas.min <= self.replicas.max', 'api.replicas.min must be <= api.replicas.max (kubectl scale sets api.replicas.min: raise api.replicas.max first)'),
      rule('self.port != self.metricsPort', 'api.port and api.metricsPort must differ'),
      rule(
        'self.replicas.max <= 1 || has(self.imageStorage)',
        "api.replicas.max > 1 needs storage every replica shares: set api.imageStorage.s3 (bucket, endpoint, credentialsSecretRef) or api.imageStorage.pvc (a ReadWriteMany claim), or set api.replicas to {min: 1, max: 1}",
      ),
    ],
  },
);

export const DEFAULT_TRITON_IMAGE = 'nvcr.io/nvidia/tritonserver:24.08-py3';

export const TritonSpecSchema = Type.Object(
  {
    image: Type.String({ minLength: 1, maxLength: 512, default: DEFAULT_TRITON_IMAGE }),
    imagePullPolicy: Type.Optional(PullPolicy),
    storageUri: Type.String({
      description: 'Model repository - s3://bucket/path, gs://bucket/path or pvc://claim[/sub/path].',
      maxLength: 1024,
      'x-kubernetes-validations': [
        rule(
          "self.matches('^(s3|gs)://[a-z0-9][-a-z0-9._]{1,61}[a-z0-9](/.*)?$') || self.matches('^pvc://[a-z0-9]([-a-z0-9]*[a-z0-9])?(/.*)?$')",
          'storageUri must be s3://bucket/path, gs://bucket/path or pvc://claim/path',
        ),
      ],
    }),
    storageSecretRef: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 253 }) },
        {
          description:
            'Storage credentials - for s3:// its keys become Triton\'s environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION) and, as MODEL_CATALOG_S3_*, the API\'s for reading the catalog; for gs:// its key credentials.json is mounted and named by GOOGLE_APPLICATION_CREDENTIALS.',
        },
      ),
    ),
    modelControlMode: StringEnum(['none', 'explicit', 'poll'], { default: 'explicit' }),
    models: Type.Optional(
      Type.Array(ModelName(), {
        description: 'Models loaded at start in explicit mode (default - modelName). A canary of another model must be listed here; changing the list restarts the Triton pods.',
        maxItems: 64,
      }),
    ),
    modelName: Type.String({
      minLength: 1,
      maxLength: 128,
      default: 'centernet',
      description: 'The model the API infers with (TRITON_MODEL_NAME).',
    }),
    modelVersion: ModelVersion({
      default: '',
      description:
        "The version of modelName the API asks Triton for (TRITON_MODEL_VERSION); empty: the newest Triton has loaded. In explicit mode the operator loads it on every Triton pod (with a canary's version), and unloads the others once the API pods have rolled; a Triton pod is ready once it has it. Changing it rolls the API pods only; setting it the first time restarts Triton once (its readiness gate).",
    }),
    gpus: Type.Integer({ minimum: 0, maximum: 16, default: 1, description: 'GPUs per Triton pod; 0 runs on CPU.' }),
    gpuResourceName: Type.String({ default: 'nvidia.com/gpu' }),
    shmSize: Type.String({ default: '1Gi', pattern: '^[0-9]+(Ki|Mi|Gi)$' }),
    replicas: Replicas(100, { min: 1, max: 4 }),
    resources: Resources({ requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '8Gi' } }),
    nodeSelector: Type.Optional(
      StringMap(Type.String(), { description: 'Defaults to nvidia.com/gpu.present=true when gpus > 0 and nothing is set.' }),
    ),
    tolerations: Type.Optional(
      Type.Array(Opaque(), { description: 'Defaults to tolerating the nvidia.com/gpu taint when gpus > 0 and nothing is set.' }),
    ),
    affinity: Type.Optional(Opaque()),
    extraArgs: Type.Optional(Type.Array(Type.String(), { maxItems: 64 })),
    startupTimeoutSeconds: Type.Integer({
      minimum: 30,
      maximum: 7200,
      default: 600,
      description: 'How long Triton may take to load its models before it counts as failed.',
    }),
  },
  {
    description: 'NVIDIA Triton Inference Server pods serving the model repository.',
    'x-kubernetes-validations': [
      rule('self.replicas.min <= self.replicas.max', 'triton.replicas.min must be <= triton.replicas.max'),
      rule(
        "self.modelControlMode == 'explicit' || !has(self.models) || size(self.models) == 0",
        'triton.models may only be listed with modelControlMode explicit',
      ),
      rule("!self.storageUri.startsWith('pvc://') || !has(self.storageSecretRef)", 'triton.storageSecretRef is for s3:// and gs:// storage only'),
    ],
  },
);

const AnalysisInt = (min: number, max: number, def: number, description: string) => Type.Integer({ minimum: min, maximum: max, default: def, description });

/**
 * Automatic promotion and rollback (docs/operator.md, "Automatic analysis"): the operator
 * compares the canary with the stable model on the API's own per-model metrics in Prometheus
 * and raises the canary's weight, holds it, promotes it (every request) or rolls it back (none).
 */
export const CanaryAnalysisSchema = Type.Object(
  {
    intervalSeconds: AnalysisInt(5, 3600, 60, 'Seconds between two checks.'),
    windowSeconds: Type.Optional(
      Type.Integer({
        minimum: 5,
        maximum: 86_400,
        description:
          'Seconds of metrics each check reads (Prometheus increase() over this range); unset - intervalSeconds, so that no two checks read the same requests. Longer windows overlap: one bad minute then fails several checks.',
      }),
    ),
    stepWeight: AnalysisInt(1, 100, 10, 'Percent added to the canary after each passing check.'),
    maxWeight: AnalysisInt(1, 99, 50, 'The highest weight a check runs at (below 100: the stable side needs requests to compare with); a passing check there promotes the canary (weight 100).'),
    failureLimit: AnalysisInt(1, 100, 2, 'Failed checks in one rollout that roll the canary back (weight 0).'),
    minRequests: AnalysisInt(1, 1_000_000, 50, 'Requests (first attempts) each side needs in the window; fewer on either - inconclusive, the weight holds.'),
    maxErrorRateIncrease: AnalysisInt(0, 100, 1, "Percentage points the canary's error rate (ERROR and timeout among first attempts) may exceed the stable model's."),
    maxLatencyIncrease: AnalysisInt(0, 10_000, 50, "Percent the canary's mean inference latency may exceed the stable model's."),
    maxBadFeedbackIncrease: AnalysisInt(0, 100, 10, "Percentage points the canary's share of 'bad' feedback may exceed the stable model's, once both have minFeedback ratings in the window."),
    minFeedback: AnalysisInt(1, 1_000_000, 20, 'Ratings each side needs in the window before feedback is compared.'),
  },
  {
    description:
      "Automatic analysis: the canary starts at weight, and every intervalSeconds the operator compares it with the stable model on the API's metrics in Prometheus (the operator's --prometheus-url): error rate, mean inference latency and bad feedback. A pass raises the weight by stepWeight up to maxWeight, then promotes (weight 100); failureLimit failed checks roll back (weight 0). Promoted or rolled back, the canary stays in the spec until edited: promote for good by making it the stable model (docs/operator.md).",
  },
);

export const CanarySpecSchema = Type.Object(
  {
    modelName: Type.Optional(
      ModelName({ description: 'The canary model (CANARY_MODEL_NAME); unset - triton.modelName, a canary of another version of the same model.' }),
    ),
    modelVersion: Type.Optional(ModelVersion({ description: "The canary's version (CANARY_MODEL_VERSION); unset or empty - the newest Triton has loaded. Set, in explicit mode, the operator loads it on every Triton pod before the API pods are given it." })),
    weight: Type.Integer({
      minimum: 0,
      maximum: 100,
      description:
        "Percent of requests the API sends to the canary (CANARY_WEIGHT), chosen by a hash of the canary's name and version and each request's external_id: within one canary the same id stays on one side, and raising the weight only moves ids from stable to canary. 0 - the canary is loaded but answers nothing. A change rolls the API pods (it is their environment). With analysis - the weight the canary starts at.",
    }),
    analysis: Type.Optional(CanaryAnalysisSchema),
  },
  {
    description:
      'A canary of another model or version next to the stable one (triton.modelName/modelVersion), taking weight percent of requests. Promote - set triton.modelName/modelVersion to the canary and remove canary; abort - remove canary.',
    'x-kubernetes-validations': [
      rule(
        '!has(self.analysis) || (self.weight >= 1 && self.weight <= self.analysis.maxWeight)',
        'with analysis, weight is the weight the canary starts at: from 1 to analysis.maxWeight',
      ),
    ],
  },
);

const ComponentAutoscalingSchema = Type.Object({
  metrics: Type.Optional(
    Type.Array(Opaque(), {
      description:
        "autoscaling/v2 MetricSpec list, passed through. Default - 70% CPU for the API; for Triton the Pods metric triton_queue_time_us (average queue time per request in microseconds, target 20000), which a Prometheus adapter must serve (docs/operator.md).",
      maxItems: 16,
    }),
  ),
  behavior: Type.Optional(Opaque()),
});

export const RecognitionServiceSpecSchema = Type.Object({
  api: ApiSpecSchema,
  triton: TritonSpecSchema,
  canary: Type.Optional(CanarySpecSchema),
  autoscaling: Type.Object(
    {
      enabled: Type.Boolean({ default: true }),
      api: Type.Optional(ComponentAutoscalingSchema),
      triton: Type.Optional(ComponentAutoscalingSchema),
    },
    {
      default: {},
      description: 'HorizontalPodAutoscalers (autoscaling/v2), one per component whose replicas.max > replicas.min.',
    },
  ),
  podDisruptionBudget: Type.Object(
    {
      enabled: Type.Boolean({ default: true }),
      maxUnavailable: Type.Unsafe<number | string>({
        'x-kubernetes-int-or-string': true,
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        default: 1,
        'x-kubernetes-validations': [
          rule("type(self) == int ? self >= 0 : self.matches('^[0-9]+%$')", 'maxUnavailable must be a count >= 0 or a percentage such as 25%'),
        ],
      }),
    },
    { default: {} },
  ),
  monitoring: Type.Object(
    {
      serviceMonitor: Type.Object(
        {
          enabled: Type.Boolean({ default: true }),
          interval: Type.String({ default: '30s', pattern: '^[0-9]+(ms|s|m|h)$' }),
          labels: Type.Optional(StringMap(Type.String())),
        },
        { default: {}, description: 'A monitoring.coreos.com ServiceMonitor, created only when that CRD is installed.' },
      ),
    },
    { default: {} },
  ),
  networkPolicy: Type.Object(
    { enabled: Type.Boolean({ default: true }) },
    { default: {}, description: 'A NetworkPolicy that lets only the API pods reach Triton.' },
  ),
}, {
  'x-kubernetes-validations': [
    // The API reads the catalog from s3:// and pvc:// model repositories itself (src/operator/desired/catalog.ts).
    rule(
      "!self.triton.storageUri.startsWith('gs://') || has(self.api.catalogConfigMapRef)",
      'gs:// model storage needs api.catalogConfigMapRef: the API reads the catalog from s3:// or pvc:// storage only',
    ),
    // Stable and canary are told apart by name and version; the same pair on both sides is no canary.
    rule(
      "!has(self.canary) || (has(self.canary.modelName) && self.canary.modelName != self.triton.modelName) || (has(self.canary.modelVersion) ? self.canary.modelVersion : '') != (has(self.triton.modelVersion) ? self.triton.modelVersion : '')",
      'canary must differ from the stable model (triton.modelName/modelVersion) in modelName or modelVersion',
    ),
    // With the stable version empty (the newest loaded) a canary version of the same model,
    // once loaded, would be the newest: both sides the canary. The API refuses it too.
    rule(
      "!has(self.canary) || (has(self.canary.modelName) && self.canary.modelName != self.triton.modelName) || (has(self.triton.modelVersion) && self.triton.modelVersion != '')",
      'a canary of the same model needs triton.modelVersion: with it empty the stable side is the newest version loaded, possibly the canary',
    ),
    // Triton's --load-model list must not change when a canary starts, is promoted or aborted
    // (every Triton pod would restart, and a promotion could unload what older API pods still
    // use): in explicit mode another model's canary is listed in triton.models beforehand.
    rule(
      "!has(self.canary) || !has(self.canary.modelName) || self.canary.modelName == self.triton.modelName || self.triton.modelControlMode != 'explicit' || (has(self.triton.models) && self.canary.modelName in self.triton.models)",
      'a canary of another model must be listed in triton.models (modelControlMode explicit), so that starting, promoting or aborting it never restarts Triton',
    ),
    // The accurate profile fuses fixed models; a canary would compare one of them alone.
    rule(
      "!has(self.api.detectionProfile) || self.api.detectionProfile != 'accurate' || !has(self.canary)",
      'api.detectionProfile accurate cannot run with a canary: roll the model out with the fast profile, then switch',
    ),
    // Every model of the ensemble is served by the same Triton: in explicit mode it loads only what is listed.
    rule(
      "!has(self.api.detectionProfile) || self.api.detectionProfile != 'accurate' || self.triton.modelControlMode != 'explicit' || (has(self.triton.models) && (has(self.api.ensembleModels) ? self.api.ensembleModels : ['ssdlite']).all(m, m in self.triton.models))",
      'api.detectionProfile accurate with modelControlMode explicit: list every model of api.ensembleModels (default ssdlite) in triton.models',
    ),
    // A ConfigMap catalog names one model's labels: another model's canary needs its own key.
    rule(
      '!has(self.canary) || !has(self.canary.modelName) || self.canary.modelName == self.triton.modelName || !has(self.api.catalogConfigMapRef) || has(self.api.catalogConfigMapRef.canaryKey)',
      "a canary of another model needs api.catalogConfigMapRef.canaryKey: the ConfigMap key holding that model's catalog",
    ),
  ],
});

export const CONDITION_TYPES = ['ApiReady', 'TritonReady', 'Ready', 'Progressing', 'Degraded', 'AutoscalingMetricsAvailable'] as const;

/** Status objects are written whole by the operator; the CRD requires none of their fields. */
function operatorWritten<T extends TObject>(schema: T): T {
  delete (schema as { required?: unknown }).required;
  return schema;
}

const ComponentStatusSchema = operatorWritten(Type.Object({
  deployment: Type.String(),
  replicas: Type.Integer(),
  readyReplicas: Type.Integer(),
  updatedReplicas: Type.Integer(),
  availableReplicas: Type.Integer(),
  /** "ready/desired", for the printer columns. */
  summary: Type.String(),
  /** The pods' label selector as a string: the scale subresource's labelSelectorPath reads the API's. */
  selector: Type.String(),
  endpoint: Type.Optional(Type.String()),
}));

export const ConditionSchema = Type.Object({
  type: Type.Unsafe<(typeof CONDITION_TYPES)[number]>({ type: 'string', maxLength: 316 }),
  status: StringEnum(['True', 'False', 'Unknown']),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  reason: Type.String({ maxLength: 1024 }),
  message: Type.String({ maxLength: 32768 }),
});

const ModelRefSchema = operatorWritten(Type.Object({ name: Type.String(), version: Type.String() }));

/** What the API serves, from the spec: the stable model, and the canary with its share while one is set. */
/** One side's figures over a check's window. */
const SideFiguresSchema = operatorWritten(
  Type.Object({
    requests: Type.Integer({ description: 'First attempts answered or failed in the window.' }),
    errorRatePercent: Type.Number(),
    meanLatencyMs: Type.Optional(Type.Number()),
    ratings: Type.Integer(),
    badFeedbackPercent: Type.Optional(Type.Number()),
  }),
);

/** The automatic analysis of the canary in status.rollout.canary. */
const AnalysisStatusSchema = operatorWritten(
  Type.Object({
    passedChecks: Type.Integer(),
    failedChecks: Type.Integer(),
    /** The start of the current interval: the next check is due intervalSeconds after it. */
    lastCheckTime: Type.String({ format: 'date-time' }),
    /** The last check's outcome, in words. */
    message: Type.String({ maxLength: 4096 }),
    stable: Type.Optional(SideFiguresSchema),
    canary: Type.Optional(SideFiguresSchema),
  }),
);

/**
 * What the API serves: the stable model, and the canary with its share while one is set.
 * Phases: Stable (no canary), Canary (a weight set by hand), Analysing (the operator sets the
 * weight), Promoted (analysis passed: weight 100) or RolledBack (analysis failed: weight 0).
 */
export const ROLLOUT_PHASES = ['Stable', 'Canary', 'Analysing', 'Promoted', 'RolledBack'] as const;

export const RolloutStatusSchema = operatorWritten(
  Type.Object({
    phase: StringEnum(ROLLOUT_PHASES),
    stable: ModelRefSchema,
    canary: Type.Optional(ModelRefSchema),
    canaryWeight: Type.Integer(),
    analysis: Type.Optional(AnalysisStatusSchema),
  }),
);

export const RecognitionServiceStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  rollout: Type.Optional(RolloutStatusSchema),
  url: Type.Optional(Type.String()),
  api: Type.Optional(ComponentStatusSchema),
  triton: Type.Optional(ComponentStatusSchema),
  conditions: Type.Optional(
    Type.Array(ConditionSchema, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  ),
  lastFailure: Type.Optional(
    operatorWritten(
      Type.Object({
        component: Type.Unsafe<'api' | 'triton' | 'operator'>({ type: 'string' }),
        reason: Type.String(),
        message: Type.String(),
        time: Type.String({ format: 'date-time' }),
      }),
    ),
  ),
});

/**
 * The whole object as the CRD validates it. Status fields are all written by the operator,
 * so none is required there; metadata is the API server's, bar the name's length.
 */
export const RecognitionServiceSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(
      // Children are named <name>-api-metrics etc. and Service names are DNS labels (63).
      Type.Object({ name: Type.Optional(Type.String({ maxLength: 40 })) }),
    ),
    spec: RecognitionServiceSpecSchema,
    status: Type.Optional(RecognitionServiceStatusSchema),
  },
  { description: 'A recognition-service deployment - the REST API and its NVIDIA Triton inference pods.' },
);
