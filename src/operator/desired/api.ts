/** The API's Deployment and Service: pure functions of the RecognitionService. */
import type { EnvVar, RecognitionService } from '../api/types.js';
import {
  childMeta,
  childName,
  selectorLabels,
  tritonGrpcTarget,
  apiUrl,
  type KubeObject,
} from './naming.js';

/** The API stops within SHUTDOWN_TIMEOUT_MS (30 s by default); the pod gets a few seconds more. */
const SHUTDOWN_TIMEOUT_MS = 30_000;

function secretEnv(name: string, ref: { name: string; key: string }): EnvVar {
  return { name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

/** Environment of the API container, in src/config.ts's names. Extra env overrides by name. */
export function apiEnv(rs: RecognitionService, clusterDomain?: string): EnvVar[] {
  const api = rs.spec.api;
  const own: EnvVar[] = [
    { name: 'HOST', value: '0.0.0.0' },
    { name: 'PORT', value: String(api.port) },
    { name: 'METRICS_PORT', value: String(api.metricsPort) },
    { name: 'LOG_LEVEL', value: api.logLevel },
    { name: 'DATA_DIR', value: '/data' },
    secretEnv('DATABASE_URL', api.databaseUrlSecretRef),
    ...(api.redisUrlSecretRef ? [secretEnv('REDIS_URL', api.redisUrlSecretRef)] : []),
    ...(api.imageUrlSecretRef ? [secretEnv('IMAGE_URL_SECRET', api.imageUrlSecretRef)] : []),
    // dns:/// + the headless Service: grpc-js resolves every Triton pod and round-robins.
    { name: 'TRITON_URL', value: tritonGrpcTarget(rs, clusterDomain) },
    { name: 'TRITON_MODEL_NAME', value: rs.spec.triton.modelName },
    { name: 'SYNC_TIMEOUT_MS', value: String(api.syncTimeoutMs) },
    { name: 'RATE_LIMIT_PER_MINUTE', value: String(api.rateLimitPerMinute) },
    { name: 'LOOKUP_RATE_LIMIT_PER_MINUTE', value: String(api.lookupRateLimitPerMinute) },
    { name: 'DEFAULT_MONTHLY_QUOTA', value: String(api.defaultMonthlyQuota) },
    { name: 'PUBLIC_BASE_URL', value: api.publicBaseUrl ?? apiUrl(rs) },
    { name: 'SHUTDOWN_TIMEOUT_MS', value: String(SHUTDOWN_TIMEOUT_MS) },
  ];
  const extra = api.env ?? [];
  const overridden = new Set(extra.map((e) => e.name));
  return [...own.filter((e) => !overridden.has(e.name)), ...extra];
}

/** Replicas are left to the HPA when one exists, so the two never fight over the field. */
export function hasAutoscaler(rs: RecognitionService, component: 'api' | 'triton'): boolean {
  const r = rs.spec[component].replicas;
  return (rs.spec.autoscaling?.enabled ?? true) && r.max > r.min;
}

export function apiDeployment(rs: RecognitionService, clusterDomain?: string): KubeObject {
  const api = rs.spec.api;
  const labels = selectorLabels(rs, 'api');
  const probe = (path: string, period: number, failures: number) => ({
    httpGet: { path, port: 'http' },
    periodSeconds: period,
    timeoutSeconds: 3,
    failureThreshold: failures,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMeta(rs, 'api'),
    spec: {
      ...(hasAutoscaler(rs, 'api') ? {} : { replicas: api.replicas.min }),
      selector: { matchLabels: labels },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: {
        metadata: {
          labels: childMeta(rs, 'api').labels,
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(api.metricsPort),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          terminationGracePeriodSeconds: SHUTDOWN_TIMEOUT_MS / 1000 + 5,
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'api',
              image: api.image,
              ...(api.imagePullPolicy ? { imagePullPolicy: api.imagePullPolicy } : {}),
              command: ['node', 'dist/server.js'],
              ports: [
                { name: 'http', containerPort: api.port, protocol: 'TCP' },
                { name: 'metrics', containerPort: api.metricsPort, protocol: 'TCP' },
              ],
              env: apiEnv(rs, clusterDomain),
              resources: api.resources,
              startupProbe: probe('/healthz', 2, 30),
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 2),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'data', mountPath: '/data' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

export function apiService(rs: RecognitionService): KubeObject {
  const api = rs.spec.api;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...childMeta(rs, 'api'),
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(api.metricsPort) },
    },
    spec: {
      type: api.serviceType,
      selector: selectorLabels(rs, 'api'),
      ports: [
        { name: 'http', port: api.port, targetPort: 'http', protocol: 'TCP' },
        { name: 'metrics', port: api.metricsPort, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}

export { childName };
