/**
 * The CRD's defaults, applied again in code. The API server fills them in on write; the
 * builders still call this so an object read from an older CRD version (or built in a
 * unit test) never reaches them half-filled. Keep in step with crds/ (a test checks).
 */
import type { RecognitionService, RecognitionServiceSpec } from './types.js';

export const DEFAULT_TRITON_IMAGE = 'nvcr.io/nvidia/tritonserver:24.08-py3';

export function withDefaults(rs: RecognitionService): RecognitionService {
  const s = rs.spec;
  const api = s.api;
  const triton = s.triton;
  const spec: RecognitionServiceSpec = {
    api: {
      ...api,
      replicas: { min: api.replicas?.min ?? 2, max: api.replicas?.max ?? 10 },
      resources: api.resources ?? { requests: { cpu: '500m', memory: '512Mi' }, limits: { memory: '1Gi' } },
      databaseUrlSecretRef: { name: api.databaseUrlSecretRef.name, key: api.databaseUrlSecretRef.key ?? 'DATABASE_URL' },
      redisUrlSecretRef: api.redisUrlSecretRef && { name: api.redisUrlSecretRef.name, key: api.redisUrlSecretRef.key ?? 'REDIS_URL' },
      imageUrlSecretRef: api.imageUrlSecretRef && { name: api.imageUrlSecretRef.name, key: api.imageUrlSecretRef.key ?? 'IMAGE_URL_SECRET' },
      port: api.port ?? 8080,
      metricsPort: api.metricsPort ?? 9464,
      syncTimeoutMs: api.syncTimeoutMs ?? 29_000,
      rateLimitPerMinute: api.rateLimitPerMinute ?? 10,
      lookupRateLimitPerMinute: api.lookupRateLimitPerMinute ?? 600,
      defaultMonthlyQuota: api.defaultMonthlyQuota ?? 10_000,
      logLevel: api.logLevel ?? 'info',
      serviceType: api.serviceType ?? 'ClusterIP',
      console: { enabled: api.console?.enabled ?? true, sessionTtlSeconds: api.console?.sessionTtlSeconds },
    },
    triton: {
      ...triton,
      image: triton.image ?? DEFAULT_TRITON_IMAGE,
      modelControlMode: triton.modelControlMode ?? 'explicit',
      modelName: triton.modelName ?? 'centernet',
      gpus: triton.gpus ?? 1,
      gpuResourceName: triton.gpuResourceName ?? 'nvidia.com/gpu',
      shmSize: triton.shmSize ?? '1Gi',
      replicas: { min: triton.replicas?.min ?? 1, max: triton.replicas?.max ?? 4 },
      resources: triton.resources ?? { requests: { cpu: '2', memory: '4Gi' }, limits: { memory: '8Gi' } },
      startupTimeoutSeconds: triton.startupTimeoutSeconds ?? 600,
    },
    autoscaling: { enabled: s.autoscaling?.enabled ?? true, api: s.autoscaling?.api, triton: s.autoscaling?.triton },
    podDisruptionBudget: {
      enabled: s.podDisruptionBudget?.enabled ?? true,
      maxUnavailable: s.podDisruptionBudget?.maxUnavailable ?? 1,
    },
    monitoring: {
      serviceMonitor: {
        enabled: s.monitoring?.serviceMonitor?.enabled ?? true,
        interval: s.monitoring?.serviceMonitor?.interval ?? '30s',
        labels: s.monitoring?.serviceMonitor?.labels,
      },
    },
    networkPolicy: { enabled: s.networkPolicy?.enabled ?? true },
  };
  return { ...rs, spec };
}
