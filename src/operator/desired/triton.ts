/** Triton's Deployment and headless Service: pure functions of the RecognitionService. */
import type { RecognitionService } from '../api/types.js';
import { hasAutoscaler } from './policies.js';
import { gatesReadiness, VERSIONS_LOADED_CONDITION } from './versions.js';
import {
  childMeta,
  selectorLabels,
  TRITON_GRPC_PORT,
  TRITON_HTTP_PORT,
  TRITON_METRICS_PORT,
  type KubeObject,
} from './naming.js';

const MODELS_MOUNT = '/models';
const STARTUP_PROBE_PERIOD_S = 10;

/** The non-root user of NVIDIA's Triton images (`triton-server`, uid and gid 1000). */
export const TRITON_UID = 1000;
/**
 * The one writable directory of a Triton pod (its root filesystem is read-only): Triton
 * downloads s3:// and gs:// repositories into /tmp, the Python backend unpacks its execution
 * environments there, and HOME points at it so CUDA's JIT cache (~/.nv) and Python caches
 * (~/.cache) have somewhere to go.
 */
const TMP_MOUNT = '/tmp';

export interface ModelStorage {
  /** The --model-repository argument. */
  repository: string;
  /** PVC to mount read-only at /models, for pvc:// URIs. */
  claimName?: string;
}

/** s3:// and gs:// go to Triton as they are; pvc://claim/sub/path mounts the claim. */
export function modelStorage(storageUri: string): ModelStorage {
  const pvc = /^pvc:\/\/([^/]+)(\/.*)?$/.exec(storageUri);
  if (!pvc) return { repository: storageUri };
  const sub = (pvc[2] ?? '').replace(/\/+$/, '');
  return { repository: `${MODELS_MOUNT}${sub}`, claimName: pvc[1] };
}

const GCS_CREDENTIALS_DIR = '/var/run/secrets/model-storage';
export const GCS_CREDENTIALS_KEY = 'credentials.json';

/**
 * s3://: the Secret's keys become the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_DEFAULT_REGION...). gs://: Google wants a key file, so the Secret is mounted and its
 * credentials.json named by GOOGLE_APPLICATION_CREDENTIALS.
 */
export function storageCredentials(rs: RecognitionService): { container: Record<string, unknown>; mounts: unknown[]; volumes: unknown[] } {
  const ref = rs.spec.triton.storageSecretRef;
  if (!ref || rs.spec.triton.storageUri.startsWith('pvc://')) return { container: {}, mounts: [], volumes: [] };
  if (rs.spec.triton.storageUri.startsWith('gs://')) {
    return {
      container: { env: [{ name: 'GOOGLE_APPLICATION_CREDENTIALS', value: `${GCS_CREDENTIALS_DIR}/${GCS_CREDENTIALS_KEY}` }] },
      mounts: [{ name: 'storage-credentials', mountPath: GCS_CREDENTIALS_DIR, readOnly: true }],
      volumes: [{ name: 'storage-credentials', secret: { secretName: ref.name } }],
    };
  }
  return { container: { envFrom: [{ secretRef: { name: ref.name } }] }, mounts: [], volumes: [] };
}

/**
 * The models Triton loads at start in explicit mode: triton.models (default: modelName).
 * Versions are not Triton arguments: a pod starts with its config.pbtxt's version_policy,
 * then the operator loads the versions the spec pins (./versions.ts), so a new stable or
 * canary version changes only the API's environment and never restarts Triton. A canary of another model is listed in
 * triton.models by the SRE (a CRD rule): the operator never adds it, so starting, promoting
 * or aborting a canary leaves Triton's pods alone; only editing triton.models restarts them.
 */
function loadedModels(rs: RecognitionService): string[] {
  const t = rs.spec.triton;
  return t.models && t.models.length > 0 ? [...t.models] : [t.modelName];
}

export function tritonArgs(rs: RecognitionService): string[] {
  const t = rs.spec.triton;
  const args = [
    `--model-repository=${modelStorage(t.storageUri).repository}`,
    `--model-control-mode=${t.modelControlMode}`,
  ];
  if (t.modelControlMode === 'explicit') for (const m of loadedModels(rs)) args.push(`--load-model=${m}`);
  if (t.modelControlMode === 'poll') args.push('--repository-poll-secs=30');
  args.push(
    `--http-port=${TRITON_HTTP_PORT}`,
    `--grpc-port=${TRITON_GRPC_PORT}`,
    `--metrics-port=${TRITON_METRICS_PORT}`,
    // A model that fails to load ends the process, so a broken repository shows as a crash loop.
    '--exit-on-error=true',
    '--strict-readiness=true',
    ...(t.extraArgs ?? []),
  );
  return args;
}

function gpuScheduling(rs: RecognitionService): { nodeSelector?: Record<string, string>; tolerations?: unknown[] } {
  const t = rs.spec.triton;
  const gpu = t.gpus > 0;
  const nodeSelector = t.nodeSelector ?? (gpu ? { 'nvidia.com/gpu.present': 'true' } : undefined);
  const tolerations = t.tolerations ?? (gpu ? [{ key: t.gpuResourceName, operator: 'Exists', effect: 'NoSchedule' }] : undefined);
  return { ...(nodeSelector ? { nodeSelector } : {}), ...(tolerations ? { tolerations } : {}) };
}

export function tritonDeployment(rs: RecognitionService): KubeObject {
  const t = rs.spec.triton;
  const storage = modelStorage(t.storageUri);
  const limits: Record<string, string | number> = { ...(t.resources.limits ?? {}) };
  const requests: Record<string, string | number> = { ...(t.resources.requests ?? {}) };
  if (t.gpus > 0) limits[t.gpuResourceName] = String(t.gpus);
  const credentials = storageCredentials(rs);
  const credentialsEnv = (credentials.container.env as unknown[] | undefined) ?? [];
  const httpProbe = (path: string, period: number, failures: number) => ({
    httpGet: { path, port: 'http' },
    periodSeconds: period,
    timeoutSeconds: 5,
    failureThreshold: failures,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMeta(rs, 'triton'),
    spec: {
      ...(hasAutoscaler(rs, 'triton') ? {} : { replicas: t.replicas.min }),
      selector: { matchLabels: selectorLabels(rs, 'triton') },
      // Loading a model takes long and GPUs are scarce: replace one pod at a time.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      progressDeadlineSeconds: t.startupTimeoutSeconds + 300,
      template: {
        metadata: {
          labels: childMeta(rs, 'triton').labels,
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(TRITON_METRICS_PORT),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: TRITON_UID,
            runAsGroup: TRITON_UID,
            fsGroup: TRITON_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...gpuScheduling(rs),
          ...(t.affinity ? { affinity: t.affinity } : {}),
          ...(gatesReadiness(rs) ? { readinessGates: [{ conditionType: VERSIONS_LOADED_CONDITION }] } : {}),
          containers: [
            {
              name: 'triton',
              image: t.image,
              ...(t.imagePullPolicy ? { imagePullPolicy: t.imagePullPolicy } : {}),
              command: ['tritonserver'],
              args: tritonArgs(rs),
              ports: [
                { name: 'http', containerPort: TRITON_HTTP_PORT, protocol: 'TCP' },
                { name: 'grpc', containerPort: TRITON_GRPC_PORT, protocol: 'TCP' },
                { name: 'metrics', containerPort: TRITON_METRICS_PORT, protocol: 'TCP' },
              ],
              ...credentials.container,
              env: [{ name: 'HOME', value: TMP_MOUNT }, ...credentialsEnv],
              resources: {
                ...(Object.keys(requests).length > 0 ? { requests } : {}),
                ...(Object.keys(limits).length > 0 ? { limits } : {}),
              },
              // Sized for model loading: liveness and readiness only start once this passes.
              startupProbe: httpProbe('/v2/health/ready', STARTUP_PROBE_PERIOD_S, Math.ceil(t.startupTimeoutSeconds / STARTUP_PROBE_PERIOD_S)),
              livenessProbe: httpProbe('/v2/health/live', 10, 3),
              readinessProbe: httpProbe('/v2/health/ready', 5, 2),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'dshm', mountPath: '/dev/shm' },
                { name: 'tmp', mountPath: TMP_MOUNT },
                ...(storage.claimName ? [{ name: 'models', mountPath: MODELS_MOUNT, readOnly: true }] : []),
                ...credentials.mounts,
              ],
            },
          ],
          volumes: [
            // Triton passes tensors between its backends through shared memory.
            { name: 'dshm', emptyDir: { medium: 'Memory', sizeLimit: t.shmSize } },
            // On the node's disk: holds a whole downloaded s3:// or gs:// repository.
            { name: 'tmp', emptyDir: {} },
            ...(storage.claimName ? [{ name: 'models', persistentVolumeClaim: { claimName: storage.claimName, readOnly: true } }] : []),
            ...credentials.volumes,
          ],
        },
      },
    },
  };
}

/**
 * Headless: DNS returns every ready Triton pod, so the API's gRPC client (dns:/// target,
 * round_robin policy) spreads calls over them; a ClusterIP would pin each long-lived HTTP/2
 * connection to one pod.
 */
export function tritonService(rs: RecognitionService): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(rs, 'triton'),
    spec: {
      clusterIP: 'None',
      selector: selectorLabels(rs, 'triton'),
      ports: [
        { name: 'http', port: TRITON_HTTP_PORT, targetPort: 'http', protocol: 'TCP' },
        { name: 'grpc', port: TRITON_GRPC_PORT, targetPort: 'grpc', protocol: 'TCP', appProtocol: 'grpc' },
        { name: 'metrics', port: TRITON_METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' },
      ],
    },
  };
}
