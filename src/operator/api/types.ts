/**
 * The RecognitionService custom resource (cv.recognition.io/v1alpha1) as TypeScript types.
 * The CRD in crds/ is the authority on shape, defaults and validation; these types mirror
 * it so the desired-state builders are checked by the compiler.
 */

export const GROUP = 'cv.recognition.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'RecognitionService';
export const PLURAL = 'recognitionservices';

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface ReplicaRange {
  min: number;
  max: number;
}

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface ApiSpec {
  image: string;
  imagePullPolicy?: string;
  replicas: ReplicaRange;
  resources?: ResourceRequirements;
  env?: EnvVar[];
  /** Secret holding DATABASE_URL. */
  databaseUrlSecretRef: SecretKeyRef;
  /** Secret holding REDIS_URL. Optional: without it each replica limits on its own. */
  redisUrlSecretRef?: SecretKeyRef;
  /** Secret holding IMAGE_URL_SECRET: one signing key for every replica. */
  imageUrlSecretRef?: SecretKeyRef;
  port: number;
  metricsPort: number;
  syncTimeoutMs: number;
  rateLimitPerMinute: number;
  lookupRateLimitPerMinute: number;
  defaultMonthlyQuota: number;
  logLevel: string;
  publicBaseUrl?: string;
  serviceType: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  /** The web console under /console (CONSOLE_ENABLED). */
  console: { enabled: boolean; sessionTtlSeconds?: number };
}

export interface TritonSpec {
  image: string;
  imagePullPolicy?: string;
  /** s3://bucket/path, gs://bucket/path or pvc://claim/sub/path */
  storageUri: string;
  /** Secret whose keys become env vars (AWS_ACCESS_KEY_ID, GOOGLE_APPLICATION_CREDENTIALS...). */
  storageSecretRef?: { name: string };
  modelControlMode: 'none' | 'explicit' | 'poll';
  /** Models loaded at start in explicit mode; default: [modelName]. */
  models?: string[];
  /** The model the API asks for (TRITON_MODEL_NAME). */
  modelName: string;
  gpus: number;
  gpuResourceName: string;
  shmSize: string;
  replicas: ReplicaRange;
  resources?: ResourceRequirements;
  nodeSelector?: Record<string, string>;
  tolerations?: Array<Record<string, unknown>>;
  affinity?: Record<string, unknown>;
  extraArgs?: string[];
  startupTimeoutSeconds: number;
}

export interface ComponentAutoscaling {
  /** autoscaling/v2 MetricSpec list, passed through to the HPA. */
  metrics?: Array<Record<string, unknown>>;
  behavior?: Record<string, unknown>;
}

export interface AutoscalingSpec {
  enabled: boolean;
  api?: ComponentAutoscaling;
  triton?: ComponentAutoscaling;
}

export interface DisruptionSpec {
  enabled: boolean;
  /** Integer or percentage, as in a PodDisruptionBudget. */
  maxUnavailable: number | string;
}

export interface RecognitionServiceSpec {
  api: ApiSpec;
  triton: TritonSpec;
  autoscaling?: AutoscalingSpec;
  podDisruptionBudget?: DisruptionSpec;
  monitoring?: { serviceMonitor?: { enabled: boolean; interval?: string; labels?: Record<string, string> } };
  networkPolicy?: { enabled: boolean };
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type ConditionType = 'ApiReady' | 'TritonReady' | 'Ready' | 'Progressing' | 'Degraded';

export interface Condition {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface ComponentStatus {
  deployment: string;
  replicas: number;
  readyReplicas: number;
  updatedReplicas: number;
  availableReplicas: number;
  /** "ready/desired", for the printer columns. */
  summary: string;
  endpoint?: string;
}

export interface FailureRecord {
  component: 'api' | 'triton' | 'operator';
  reason: string;
  message: string;
  time: string;
}

export interface RecognitionServiceStatus {
  observedGeneration?: number;
  url?: string;
  api?: ComponentStatus;
  triton?: ComponentStatus;
  conditions?: Condition[];
  lastFailure?: FailureRecord;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RecognitionService {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: RecognitionServiceSpec;
  status?: RecognitionServiceStatus;
}
