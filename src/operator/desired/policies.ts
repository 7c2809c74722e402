/** HPAs, PDBs, the NetworkPolicy and the ServiceMonitor: pure functions of the resource. */
import type { RecognitionService } from '../api/types.js';
import {
  childMeta,
  childName,
  selectorLabels,
  INSTANCE_LABEL,
  FIELD_MANAGER,
  TRITON_GRPC_PORT,
  TRITON_HTTP_PORT,
  TRITON_METRICS_PORT,
  type Component,
  type KubeObject,
} from './naming.js';
import { managesTriton } from './versions.js';

/** Replicas are left to the HPA when one exists, so the two never fight over the field. */
export function hasAutoscaler(rs: RecognitionService, component: 'api' | 'triton'): boolean {
  const r = rs.spec[component].replicas;
  return (rs.spec.autoscaling?.enabled ?? true) && r.max > r.min;
}

/**
 * Triton's default scaling signal: average queue time per request in microseconds, a Pods
 * metric that a Prometheus adapter derives from nv_inference_queue_duration_us (docs/operator.md).
 */
export const TRITON_QUEUE_METRIC = 'triton_queue_time_us';

export function defaultMetrics(component: Component): Array<Record<string, unknown>> {
  if (component === 'api') {
    return [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }];
  }
  return [{ type: 'Pods', pods: { metric: { name: TRITON_QUEUE_METRIC }, target: { type: 'AverageValue', averageValue: '20000' } } }];
}

export function horizontalPodAutoscaler(rs: RecognitionService, component: Component): KubeObject | undefined {
  if (!hasAutoscaler(rs, component)) return undefined;
  const own = rs.spec.autoscaling?.[component];
  const replicas = rs.spec[component].replicas;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMeta(rs, component),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: childName(rs, component) },
      minReplicas: replicas.min,
      maxReplicas: replicas.max,
      metrics: own?.metrics && own.metrics.length > 0 ? own.metrics : defaultMetrics(component),
      ...(own?.behavior ? { behavior: own.behavior } : {}),
    },
  };
}

export function podDisruptionBudget(rs: RecognitionService, component: Component): KubeObject | undefined {
  const pdb = rs.spec.podDisruptionBudget;
  if (pdb && !pdb.enabled) return undefined;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMeta(rs, component),
    spec: {
      maxUnavailable: pdb?.maxUnavailable ?? 1,
      selector: { matchLabels: selectorLabels(rs, component) },
    },
  };
}

/** The operator's own pods: their namespace and labels (the chart passes them). */
export interface OperatorPeer {
  namespace: string;
  labels: Record<string, string>;
}

/**
 * Only the API's pods reach Triton's inference ports; its metrics port stays open to
 * scrapers. While the operator manages the spec's versions (./versions.ts), its own pods
 * reach the HTTP port too, for the model-repository API.
 */
export function tritonNetworkPolicy(rs: RecognitionService, operator?: OperatorPeer): KubeObject | undefined {
  if (rs.spec.networkPolicy && !rs.spec.networkPolicy.enabled) return undefined;
  const loader =
    operator && managesTriton(rs)
      ? [
          {
            from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': operator.namespace } }, podSelector: { matchLabels: operator.labels } }],
            ports: [{ protocol: 'TCP', port: TRITON_HTTP_PORT }],
          },
        ]
      : [];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: childMeta(rs, 'triton'),
    spec: {
      podSelector: { matchLabels: selectorLabels(rs, 'triton') },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: selectorLabels(rs, 'api') } }],
          ports: [
            { protocol: 'TCP', port: TRITON_HTTP_PORT },
            { protocol: 'TCP', port: TRITON_GRPC_PORT },
          ],
        },
        ...loader,
        { ports: [{ protocol: 'TCP', port: TRITON_METRICS_PORT }] },
      ],
    },
  };
}

/**
 * The label the ServiceMonitor copies from the Services onto every series it scrapes
 * (spec.targetLabels; Prometheus spells it app_kubernetes_io_name). The chart's alerts,
 * dashboards and adapter rule select on it, so that another Triton or Node.js service in the
 * same Prometheus (a KServe Triton exports the same nv_* names) is not taken for ours.
 */
export const SCRAPE_TARGET_LABEL = 'app.kubernetes.io/name';

/** One ServiceMonitor scraping the `metrics` port of both Services. */
export function serviceMonitor(rs: RecognitionService): KubeObject | undefined {
  const sm = rs.spec.monitoring?.serviceMonitor;
  if (sm && !sm.enabled) return undefined;
  const meta = childMeta(rs, 'api', rs.metadata.name);
  meta.labels = { ...meta.labels, ...(sm?.labels ?? {}) };
  delete meta.labels['app.kubernetes.io/component'];
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: meta,
    spec: {
      selector: { matchLabels: { [INSTANCE_LABEL]: rs.metadata.name, 'app.kubernetes.io/managed-by': FIELD_MANAGER } },
      targetLabels: [SCRAPE_TARGET_LABEL],
      endpoints: [{ port: 'metrics', path: '/metrics', interval: sm?.interval ?? '30s' }],
    },
  };
}
