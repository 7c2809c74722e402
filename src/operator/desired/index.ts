/**
 * Desired state: a RecognitionService in, the manifests of its children out. Pure: no
 * cluster access, no clock, no randomness, so it is unit-tested on plain objects.
 */
import { withDefaults } from '../api/defaults.js';
import type { RecognitionService } from '../api/types.js';
import { apiDeployment, apiService } from './api.js';
import { horizontalPodAutoscaler, podDisruptionBudget, serviceMonitor, tritonNetworkPolicy, type OperatorPeer } from './policies.js';
import { tritonDeployment, tritonService } from './triton.js';
import { childName, type KubeObject } from './naming.js';

export * from './naming.js';
export type { OperatorPeer } from './policies.js';

/** Every kind of child the operator may own, with what the API server needs to find it. */
export const CHILD_KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment', group: 'apps', plural: 'deployments' },
  { apiVersion: 'v1', kind: 'Service', group: '', plural: 'services' },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', group: 'autoscaling', plural: 'horizontalpodautoscalers' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', group: 'policy', plural: 'poddisruptionbudgets' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', group: 'networking.k8s.io', plural: 'networkpolicies' },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', group: 'monitoring.coreos.com', plural: 'servicemonitors' },
] as const;

export type ChildKind = (typeof CHILD_KINDS)[number];

export interface ChildRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

export interface DesiredState {
  /** Applied with server-side apply, in this order. */
  apply: KubeObject[];
  /** Optional children switched off in the spec: deleted if they exist. */
  remove: ChildRef[];
}

export interface ClusterCapabilities {
  /** The monitoring.coreos.com ServiceMonitor CRD is installed. */
  serviceMonitor: boolean;
}

export interface DesiredOptions {
  /** The cluster's DNS domain (kubelet --cluster-domain), for service addresses. */
  clusterDomain?: string;
  /** The uid of the signing-key Secret the operator made (none when the spec names one). */
  signingSecretUid?: string;
  /** The operator's pods, let through Triton's NetworkPolicy to load versions; unknown: not added. */
  operatorPeer?: OperatorPeer;
}

export function desiredState(resource: RecognitionService, caps: ClusterCapabilities, opts: DesiredOptions = {}): DesiredState {
  const rs = withDefaults(resource);
  const ns = rs.metadata.namespace;
  const apply: KubeObject[] = [tritonService(rs), tritonDeployment(rs)];
  const remove: ChildRef[] = [];
  const optional = (obj: KubeObject | undefined, apiVersion: string, kind: string, name: string) => {
    if (obj) apply.push(obj);
    else remove.push({ apiVersion, kind, namespace: ns, name });
  };
  // Before the API's: the operator loads versions on Triton's pods right before it applies
  // the API Deployment, through this policy.
  optional(tritonNetworkPolicy(rs, opts.operatorPeer), 'networking.k8s.io/v1', 'NetworkPolicy', childName(rs, 'triton'));
  apply.push(apiService(rs), apiDeployment(rs, opts.clusterDomain, opts.signingSecretUid));
  for (const c of ['api', 'triton'] as const) {
    optional(horizontalPodAutoscaler(rs, c), 'autoscaling/v2', 'HorizontalPodAutoscaler', childName(rs, c));
    optional(podDisruptionBudget(rs, c), 'policy/v1', 'PodDisruptionBudget', childName(rs, c));
  }
  if (caps.serviceMonitor) {
    optional(serviceMonitor(rs), 'monitoring.coreos.com/v1', 'ServiceMonitor', rs.metadata.name);
  }
  return { apply, remove };
}
