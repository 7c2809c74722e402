/**
 * AutoscalingMetricsAvailable (an owned HPA that cannot read its metric) and the
 * recognition_operator_resource_condition gauge: on plain objects, then against a real
 * etcd + kube-apiserver where the test writes the HPA's status as the HPA controller of
 * kube-controller-manager would (nobody else runs it there).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AutoscalingV2Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { computeStatus, type ObservedAutoscaler } from '../../src/operator/status.js';
import { OperatorMetrics } from '../../src/operator/metrics.js';
import type { RecognitionOperator } from '../../src/operator/operator.js';
import type { Condition, RecognitionService } from '../../src/operator/api/types.js';
import { sampleResource } from './fixtures.js';
import { applyChartRbac, eventually, findTools, installCrds, startCluster, testOperator, type TestCluster } from './helpers/cluster.js';

type Any = any;
const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T00:05:00Z');
const TYPE = 'AutoscalingMetricsAvailable';

const hpa = (name: string, active?: { status: string; reason: string; message: string }): ObservedAutoscaler => ({
  metadata: { name },
  status: active ? { conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale' }, { type: 'ScalingActive', ...active }] } : {},
});
const cond = (conds: Condition[] | undefined, type = TYPE) => conds?.find((c) => c.type === type);
const QUEUE_FAILURE = {
  status: 'False',
  reason: 'FailedGetPodsMetric',
  message: 'the HPA was unable to compute the replica count: unable to get metric triton_queue_time_us: unable to fetch metrics from custom metrics API: the server could not find the metric triton_queue_time_us for pods',
};
const ACTIVE = { status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from pods metric triton_queue_time_us' };

describe('AutoscalingMetricsAvailable from the HPAs', () => {
  test('absent without an HPA; Unknown until the HPA controller reports; True, then False naming the HPA, with its own transition time', () => {
    const rs = sampleResource();
    const none = computeStatus(rs, { pods: { api: [], triton: [] } }, T0);
    assert.equal(cond(none.conditions), undefined, 'no HPA: nothing to report');

    const fresh = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { api: hpa('vision-api'), triton: hpa('vision-triton') } }, T0);
    assert.equal(cond(fresh.conditions)?.status, 'Unknown');
    assert.match(cond(fresh.conditions)!.message, /HPA vision-api \(api\): no ScalingActive condition yet/);

    rs.status = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { api: hpa('vision-api', ACTIVE), triton: hpa('vision-triton', ACTIVE) } }, T0);
    const ok = cond(rs.status.conditions)!;
    assert.equal(ok.status, 'True');
    assert.equal(ok.reason, 'MetricsAvailable');
    assert.equal(ok.observedGeneration, 3);

    const broken = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { api: hpa('vision-api', ACTIVE), triton: hpa('vision-triton', QUEUE_FAILURE) } }, T1);
    const c = cond(broken.conditions)!;
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'FailedGetPodsMetric');
    assert.equal(c.message, `HPA vision-triton (triton): FailedGetPodsMetric: ${QUEUE_FAILURE.message}`);
    assert.equal(c.lastTransitionTime, T1.toISOString());
    assert.equal(cond(broken.conditions, 'Ready')?.lastTransitionTime, cond(rs.status.conditions, 'Ready')?.lastTransitionTime, 'other conditions keep their time');
    assert.equal(cond(broken.conditions, 'Degraded')?.status, 'False', 'a service that cannot scale still serves: not Degraded');
  });

  test('every failing reason counts, ScalingDisabled (scaled to zero) does not', () => {
    const rs = sampleResource();
    for (const reason of ['FailedGetResourceMetric', 'FailedGetExternalMetric', 'FailedGetObjectMetric', 'InvalidMetricSourceType']) {
      const s = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { api: hpa('vision-api', { status: 'False', reason, message: 'x' }) } }, T0);
      assert.equal(cond(s.conditions)?.status, 'False', reason);
      assert.equal(cond(s.conditions)?.reason, reason);
    }
    const disabled = { status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' };
    const s = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { api: hpa('vision-api', disabled) } }, T0);
    assert.equal(cond(s.conditions)?.status, 'Unknown');
    assert.equal(cond(s.conditions)?.reason, 'ScalingDisabled');
  });
});

describe('recognition_operator_resource_condition', () => {
  test('one series per condition type and status, 1 on the current one; a resource gone from the source loses its series', async () => {
    const metrics = new OperatorMetrics();
    const rs = sampleResource();
    rs.status = computeStatus(rs, { pods: { api: [], triton: [] }, autoscalers: { triton: hpa('vision-triton', QUEUE_FAILURE) } }, T0);
    let cache: RecognitionService[] = [rs];
    metrics.reportConditionsOf(() => cache);
    const text = await metrics.registry.metrics();
    const line = (type: string, status: string, v: number) => `recognition_operator_resource_condition{namespace="prod",name="vision",type="${type}",status="${status}"} ${v}`;
    for (const l of [line(TYPE, 'False', 1), line(TYPE, 'True', 0), line(TYPE, 'Unknown', 0), line('Ready', 'False', 1), line('Degraded', 'False', 1), line('Degraded', 'True', 0)]) {
      assert.ok(text.includes(l), `${l} in\n${text}`);
    }
    assert.equal(text.split('\n').filter((l) => l.startsWith('recognition_operator_resource_condition{')).length, 6 * 3);
    cache = [];
    assert.doesNotMatch(await metrics.registry.metrics(), /^recognition_operator_resource_condition\{/m);
  });
});

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GROUP = { group: 'cv.recognition.io', version: 'v1alpha1', plural: 'recognitionservices' };
const NS = 'team-h';
const OP_NS = 'recognition-system';
const parseYaml = (text: string): Any[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
const { tools, missing } = findTools();
if (!tools) console.log(`# operator cluster tests skipped: ${missing}`);

describe('an HPA that cannot read its metric, against a real kube-apiserver', { skip: tools ? false : missing }, () => {
  let cluster: TestCluster;
  let kc: KubeConfig;
  let custom: CustomObjectsApi;
  let hpas: AutoscalingV2Api;
  let operator: RecognitionOperator | undefined;

  before(async () => {
    cluster = await startCluster(tools!);
    kc = cluster.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    hpas = kc.makeApiClient(AutoscalingV2Api);
    await installCrds(kc);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of [NS, OP_NS]) await core.createNamespace({ body: { metadata: { name } } });
    // The chart's RBAC (rendered by helm when there is one), so a missing HPA permission shows here.
    const operatorKc = tools!.helm ? await applyChartRbac(cluster, tools!.helm, OP_NS) : kc;
    operator = testOperator(operatorKc, { leaseNamespace: OP_NS, identity: 'operator-h', health: { host: '127.0.0.1', port: 0 } });
    await operator.start();
    await eventually(async () => (operator!.isLeader ? true : undefined), 'operator-h to lead');
  });

  after(async () => {
    await operator?.stop();
    await cluster?.stop();
  });

  const getRs = async () => (await custom.getNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' })) as RecognitionService;
  /** Writes the HPA's status subresource, as the HPA controller does after each evaluation. */
  const writeHpaStatus = (name: string, active: { status: string; reason: string; message: string }) =>
    hpas.patchNamespacedHorizontalPodAutoscalerStatus(
      {
        name,
        namespace: NS,
        body: {
          status: {
            currentReplicas: 1,
            desiredReplicas: 1,
            conditions: [
              { type: 'AbleToScale', status: 'True', reason: 'SucceededGetScale', message: 'the HPA controller was able to get the target\'s current scale', lastTransitionTime: new Date().toISOString() },
              { type: 'ScalingActive', ...active, lastTransitionTime: new Date().toISOString() },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  /** Waits until the resource's AutoscalingMetricsAvailable condition has `status`, and returns it. */
  const conditionAt = (status: string) =>
    eventually(async () => {
      const c = cond((await getRs()).status?.conditions);
      return c?.status === status ? c : undefined;
    }, `${TYPE} ${status}`);
  const scrape = async () => (await fetch(`http://127.0.0.1:${operator!.healthPort}/metrics`)).text();
  const series = (status: string) => `recognition_operator_resource_condition{namespace="${NS}",name="vision",type="${TYPE}",status="${status}"} 1`;

  test('ScalingActive False on the Triton HPA: condition False naming it, a Warning event, the gauge; True again when it recovers; series gone with the resource', async () => {
    const body = parseYaml(fs.readFileSync(path.join(ROOT, 'crds/samples/recognitionservice-minimal.yaml'), 'utf8'))[0];
    body.metadata = { name: 'vision', namespace: NS };
    await custom.createNamespacedCustomObject({ ...GROUP, namespace: NS, body });
    for (const name of ['vision-api', 'vision-triton']) {
      await eventually(async () => (await hpas.readNamespacedHorizontalPodAutoscaler({ name, namespace: NS }).catch(() => undefined)) ?? undefined, `HPA ${name}`);
    }
    // No HPA controller here yet: nothing has said whether the metrics can be read.
    await conditionAt('Unknown');

    await writeHpaStatus('vision-api', ACTIVE);
    await writeHpaStatus('vision-triton', QUEUE_FAILURE);
    const failed = await conditionAt('False');
    assert.equal(failed.reason, 'FailedGetPodsMetric');
    assert.equal(failed.message, `HPA vision-triton (triton): FailedGetPodsMetric: ${QUEUE_FAILURE.message}`);
    assert.equal(failed.observedGeneration, (await getRs()).metadata.generation);

    const events = kc.makeApiClient(EventsV1Api);
    const warning = await eventually(async () => {
      const list = await events.listNamespacedEvent({ namespace: NS, fieldSelector: 'regarding.name=vision' });
      return list.items.find((e) => e.reason === 'AutoscalingMetricsUnavailable');
    }, 'an AutoscalingMetricsUnavailable event');
    assert.equal(warning.type, 'Warning');
    assert.match(warning.note ?? '', /HPA vision-triton \(triton\): FailedGetPodsMetric/);
    await eventually(async () => ((await scrape()).includes(series('False')) ? true : undefined), 'the gauge at status="False"');

    await writeHpaStatus('vision-triton', ACTIVE);
    const recovered = await conditionAt('True');
    assert.equal(recovered.reason, 'MetricsAvailable');
    assert.notEqual(recovered.lastTransitionTime, failed.lastTransitionTime, 'a new transition time on the change');
    await eventually(async () => {
      const text = await scrape();
      return text.includes(series('True')) && !text.includes(series('False')) ? true : undefined;
    }, 'the gauge at status="True"');

    await custom.deleteNamespacedCustomObject({ ...GROUP, namespace: NS, name: 'vision' });
    await eventually(async () => (!(await scrape()).includes(`name="vision"`) ? true : undefined), 'the series of the deleted resource gone');
  });
});
