/** The API's Deployment and Service: pure functions of the RecognitionService. */
import { SETTINGS, type Setting, type SettingName } from '../../settings.js';
import type { EnvVar, RecognitionService } from '../api/types.js';
import {
  childMeta,
  childName,
  selectorLabels,
  tritonGrpcTarget,
  apiUrl,
  type KubeObject,
} from './naming.js';
import { canaryCatalogLocation, catalogCredential, catalogLocation, catalogMounts, catalogVolumes } from './catalog.js';
import { canaryModel, stableModel } from './rollout.js';
import { hasAutoscaler } from './policies.js';

export const SIGNING_SECRET_KEY = 'IMAGE_URL_SECRET';

/** The API stops within SHUTDOWN_TIMEOUT_MS (30 s by default); the pod gets a few seconds more. */
const SHUTDOWN_TIMEOUT_MS = 30_000;
/**
 * A terminating pod keeps serving this long before SIGTERM: endpoints controllers and every
 * node's kube-proxy take a moment to stop sending it new connections, and after SIGTERM the
 * server answers new calls 503. A rolling update or a deleted pod then fails no request.
 */
const PRE_STOP_DELAY_S = 5;

/** The Secret the operator creates (random key) when spec.api.imageUrlSecretRef is unset. */
export function signingSecretName(rs: RecognitionService): string {
  return `${childName(rs, 'api')}-image-url`;
}

/** Where the API's images go, as IMAGE_STORE and S3_* (a PVC is mounted at DATA_DIR/images: `local`). */
const s3Of = (rs: RecognitionService) => rs.spec.api.imageStorage?.s3;

/** Settings whose `pod` is 'operator' (src/settings.ts): what the operator itself decides; undefined: unset. */
const COMPUTED: Partial<Record<SettingName, (rs: RecognitionService, clusterDomain?: string) => string | undefined>> = {
  imageStore: (rs) => {
    const s3 = s3Of(rs);
    return s3 ? `s3://${s3.bucket}/${s3.prefix}`.replace(/\/+$/, '') : 'local';
  },
  modelCatalog: (rs) => catalogLocation(rs),
  s3Endpoint: (rs) => s3Of(rs)?.endpoint,
  s3Region: (rs) => s3Of(rs)?.region,
  s3ForcePathStyle: (rs) => (s3Of(rs) ? String(s3Of(rs)!.forcePathStyle) : undefined),
  imageUrlMode: (rs) => (s3Of(rs)?.presignedUrls ? 'presigned' : undefined),
  s3PublicEndpoint: (rs) => (s3Of(rs)?.presignedUrls ? s3Of(rs)!.publicEndpoint : undefined),
  host: () => '0.0.0.0',
  dataDir: () => '/data',
  // dns:/// + the headless Service: grpc-js resolves every Triton pod and round-robins.
  tritonUrl: (rs, clusterDomain) => tritonGrpcTarget(rs, clusterDomain),
  tritonModelName: (rs) => rs.spec.triton.modelName,
  // The rollout (./rollout.ts): only what differs from the API's defaults is written, so a
  // resource without a version or canary keeps its pod template (an operator upgrade rolls nothing).
  tritonModelVersion: (rs) => stableModel(rs).version || undefined,
  canaryWeight: (rs) => canaryModel(rs)?.weight.toString(),
  canaryModelName: (rs) => canaryModel(rs)?.name,
  canaryModelVersion: (rs) => canaryModel(rs)?.version || undefined,
  canaryModelCatalog: (rs) => canaryCatalogLocation(rs),
  // The API reads that model's catalog (family, pre-processing, labels): see ./catalog.ts.
  modelName: (rs) => rs.spec.triton.modelName,
  publicBaseUrl: (rs) => rs.spec.api.publicBaseUrl ?? apiUrl(rs),
  shutdownTimeoutMs: () => String(SHUTDOWN_TIMEOUT_MS),
};

function podValue(rs: RecognitionService, name: SettingName, setting: Setting<unknown>, clusterDomain?: string): EnvVar | undefined {
  const source = setting.pod;
  if (source === undefined) return undefined;
  if (source === 'operator') {
    const compute = COMPUTED[name];
    if (!compute) throw new Error(`setting ${name}: pod 'operator' but the operator computes no value for it`);
    const value = compute(rs, clusterDomain);
    return value === undefined ? undefined : { name: setting.env, value };
  }
  if (typeof source === 'object' && 'storageSecretKey' in source) return catalogCredential(rs, setting.env, source);
  const api = rs.spec.api as unknown as Record<string, unknown>;
  if (source === 'spec') {
    const value = api[name] as string | number | undefined;
    return value === undefined ? undefined : { name: setting.env, value: String(value) };
  }
  let ref = api[source.secretRef] as { name: string; key: string } | undefined;
  // No signing-key foot-gun: every replica gets the same key, from the operator's own Secret.
  if (ref === undefined && source.secretRef === 'imageUrlSecretRef') ref = { name: signingSecretName(rs), key: SIGNING_SECRET_KEY };
  return ref && { name: setting.env, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } };
}

/** Environment of the API container, from the settings table of src/settings.ts. Extra env overrides by name. */
export function apiEnv(rs: RecognitionService, clusterDomain?: string): EnvVar[] {
  const own = (Object.entries(SETTINGS) as Array<[SettingName, Setting<unknown>]>)
    .map(([name, setting]) => podValue(rs, name, setting, clusterDomain))
    .filter((e): e is EnvVar => e !== undefined);
  const extra = rs.spec.api.env ?? [];
  const overridden = new Set(extra.map((e) => e.name));
  return [...own.filter((e) => !overridden.has(e.name)), ...extra];
}

/**
 * On the API's pod template: the uid of the operator's signing-key Secret. The pods read the
 * key into their environment at start, so a recreated Secret (a new key, a new uid) must roll
 * them, or old and new pods would sign and check links with different keys.
 */
export const SIGNING_SECRET_UID_ANNOTATION = 'cv.recognition.io/image-url-secret-uid';

/** signingSecretUid: the operator's signing-key Secret's uid, when it made one (see signingSecret). */
export function apiDeployment(rs: RecognitionService, clusterDomain?: string, signingSecretUid?: string): KubeObject {
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
            ...(signingSecretUid && { [SIGNING_SECRET_UID_ANNOTATION]: signingSecretUid }),
          },
        },
        spec: {
          terminationGracePeriodSeconds: PRE_STOP_DELAY_S + SHUTDOWN_TIMEOUT_MS / 1000 + 5,
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
              ...(s3Of(rs)?.credentialsSecretRef && { envFrom: [{ secretRef: { name: s3Of(rs)!.credentialsSecretRef!.name } }] }),
              resources: api.resources,
              // The kubelet's own sleep (Kubernetes 1.30+): no binary needed in the image.
              lifecycle: { preStop: { sleep: { seconds: PRE_STOP_DELAY_S } } },
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
                ...(api.imageStorage?.pvc ? [{ name: 'images', mountPath: '/data/images' }] : []),
                ...catalogMounts(rs),
              ],
            },
          ],
          volumes: [
            { name: 'data', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
            ...(api.imageStorage?.pvc ? [{ name: 'images', persistentVolumeClaim: { claimName: api.imageStorage.pvc.claimName } }] : []),
            ...catalogVolumes(rs),
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

/**
 * The operator-owned signing-key Secret, created with a random key and never rewritten
 * (the reconciler creates it only when absent: rewriting would invalidate every link).
 */
export function signingSecret(rs: RecognitionService, key: string): KubeObject | undefined {
  if (rs.spec.api.imageUrlSecretRef !== undefined) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(rs, 'api', signingSecretName(rs)),
    type: 'Opaque',
    stringData: { [SIGNING_SECRET_KEY]: key },
  };
}
