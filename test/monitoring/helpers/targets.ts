/**
 * The three things the live monitoring test scrapes, each real and on loopback:
 *  - the API server process wiring (startServer: the main port and METRICS_PORT) on real
 *    PostgreSQL and Redis, inferring through TRITON_URL;
 *  - the operator reconciling RecognitionServices on a private kube-apiserver, its probe
 *    port serving /metrics. The test plays the controllers' part (the HPA's scale, the
 *    Deployment status), as the operator's own tests do, so one resource becomes Ready; a
 *    second one meets a Service it does not own and is Degraded with failing reconciles,
 *    which the error panels and alerts need.
 * Real Triton comes from test/helpers/python-env.ts.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppsV1Api, AutoscalingV2Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import pino from 'pino';
import { parseAllDocuments } from 'yaml';
import { OperatorMetrics } from '../../../src/operator/metrics.js';
import type { RecognitionOperator } from '../../../src/operator/operator.js';
import type { RecognitionService } from '../../../src/operator/api/types.js';
import { startServer } from '../../../src/server.js';
import { createDb } from '../../../src/store/db.js';
import { createKey } from '../../../src/store/keys.js';
import { createOrg } from '../../../src/store/orgs.js';
import { testConfig } from '../../helpers/app.js';
import { REPO_ROOT } from '../../helpers/fixtures.js';
import { freePort } from '../../helpers/local-server.js';
import { createTestDatabase, TEST_REDIS_URL } from '../../helpers/services.js';
import { eventually, installCrds, startCluster, testOperator, type K8sTools, type TestCluster } from '../../operator/helpers/cluster.js';

/** The secret testConfig() gives IMAGE_URL_SECRET: the test signs an expired link with it. */
export const IMAGE_URL_SECRET = 'test-secret-for-signed-image-urls';

export interface ApiTarget {
  baseUrl: string;
  /** host:port of METRICS_PORT, what the ServiceMonitor scrapes. */
  metricsAddress: string;
  keys: { api: string; other: string; quota: string; balance: string };
  stop(): Promise<void>;
}

/**
 * The API as `recog serve` runs it, inferring on `tritonUrl`. One decode/inference slot and a
 * queue of two, so that a burst of concurrent requests meets 503 SERVICE_OVERLOADED (the 5xx
 * the availability panels and alerts count) while k6's single VU is never refused.
 */
export async function startApiTarget(tritonUrl: string, model: string): Promise<ApiTarget> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-live-'));
  await chmod(dataDir, 0o755);
  const [port, metricsPort] = [await freePort(), await freePort()];
  const baseUrl = `http://127.0.0.1:${port}`;
  const cleanup = async () => {
    await database.drop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  };
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const config = testConfig(database.url, dataDir, {
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      PUBLIC_BASE_URL: baseUrl,
      REDIS_URL: TEST_REDIS_URL,
      TRITON_URL: tritonUrl,
      TRITON_MODEL_NAME: model,
      DETECT_CONCURRENCY: '1',
      DETECT_QUEUE_LENGTH: '2',
    });
    server = await startServer(config, pino({ level: 'silent' }));
    const db = createDb(database.url);
    try {
      const key = async (name: string, o: { orgId?: string; balance?: number; quota?: number } = {}) => {
        const orgId = o.orgId ?? (await createOrg(db, { name, balance: o.balance ?? null })).id;
        const made = await createKey(db, { orgId, name, classes: ['*'], monthlyQuota: o.quota ?? 1_000_000, rateLimitPerMinute: 100_000, expiresAt: null });
        return { key: made.key, orgId };
      };
      const load = await key('live-load');
      const keys = {
        api: load.key,
        // A second key of the same organisation: the smoke scenario's ownership checks.
        other: (await key('live-other', { orgId: load.orgId })).key,
        quota: (await key('live-quota', { quota: 1 })).key,
        balance: (await key('live-balance', { balance: 0 })).key,
      };
      return {
        baseUrl,
        metricsAddress: `127.0.0.1:${metricsPort}`,
        keys,
        stop: async () => {
          await server?.shutdown('test');
          await cleanup();
        },
      };
    } finally {
      await db.destroy();
    }
  } catch (err) {
    await server?.shutdown('test').catch(() => {});
    await cleanup();
    throw err;
  }
}

const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export interface OperatorTarget {
  metricsAddress: string;
  /** The Ready resource's namespace and name, and the Degraded one's name. */
  namespace: string;
  ready: string;
  degraded: string;
  stop(): Promise<void>;
}

/**
 * A kube-apiserver with the CRD, the operator (in process, its probe port on loopback) and
 * two resources: `ready` made Ready by writing its Deployments' status, `degraded` blocked by
 * a Service of the same name it does not own (OwnershipConflict: failed reconciles, retried).
 */
export async function startOperatorTarget(tools: K8sTools, namespace: string, operatorNamespace: string): Promise<OperatorTarget> {
  const cluster: TestCluster = await startCluster(tools);
  let operator: RecognitionOperator | undefined;
  const stop = async () => {
    await operator?.stop();
    await cluster.stop();
  };
  try {
    const kc = cluster.kubeConfig();
    const custom = kc.makeApiClient(CustomObjectsApi);
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const autoscaling = kc.makeApiClient(AutoscalingV2Api);
    const docs = (file: string) =>
      parseAllDocuments(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'))
        .map((d) => d.toJS() as KubernetesObject)
        .filter(Boolean);
    await installCrds(kc);
    for (const name of [namespace, operatorNamespace]) await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'blocked-api' }, spec: { ports: [{ port: 8080 }] } } });

    operator = testOperator(kc, {
      leaseNamespace: operatorNamespace,
      identity: 'live-operator',
      health: { host: '127.0.0.1', port: 0 },
      backoff: { baseDelayMs: 200, maxDelayMs: 2_000 },
      // As `recog operator` runs it: the process series too, under the operator's prefix.
      metrics: new OperatorMetrics({ defaultMetrics: true }),
    });
    await operator.start();
    await eventually(async () => (operator!.isLeader ? true : undefined), 'the operator leads');

    const sample = docs('crds/samples/recognitionservice-minimal.yaml')[0] as RecognitionService;
    for (const name of ['vision', 'blocked']) {
      await custom.createNamespacedCustomObject({ ...GROUP, namespace, body: { ...sample, metadata: { name, namespace } } });
    }
    // The HPA controller's part (scale to minReplicas), then the Deployment controller's and
    // the kubelets': every replica of `vision` available.
    for (const name of ['vision-api', 'vision-triton']) {
      const hpa = await eventually(async () => autoscaling.readNamespacedHorizontalPodAutoscaler({ name, namespace }).catch(() => undefined), `HPA ${name}`);
      const n = hpa.spec?.minReplicas ?? 1;
      await eventually(async () => apps.readNamespacedDeployment({ name, namespace }).catch(() => undefined), `Deployment ${name}`);
      await apps.patchNamespacedDeploymentScale({ name, namespace, body: { spec: { replicas: n } } }, merge);
      const d = await apps.readNamespacedDeployment({ name, namespace });
      await apps.patchNamespacedDeploymentStatus(
        { name, namespace, body: { status: { observedGeneration: d.metadata?.generation, replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n } } },
        merge,
      );
    }
    // Waits for a condition, failing with the resource's conditions as they last were.
    const until = (name: string, type: string, status: string) =>
      eventually(async () => {
        const rs = (await custom.getNamespacedCustomObject({ ...GROUP, namespace, name })) as RecognitionService;
        const conditions = rs.status?.conditions ?? [];
        if (conditions.find((c) => c.type === type)?.status === status) return true;
        throw new Error(conditions.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`).join('; ') || 'no status');
      }, `${name} ${type}=${status}`);
    await until('vision', 'Ready', 'True');
    await until('blocked', 'Degraded', 'True');
    return { metricsAddress: `127.0.0.1:${operator.healthPort!}`, namespace, ready: 'vision', degraded: 'blocked', stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
