/** Names, labels and owner references shared by every child of a RecognitionService. */
import { API_VERSION, KIND, type RecognitionService } from '../api/types.js';

export type Component = 'api' | 'triton';

/** Server-side-apply field manager and the managed-by label value. */
export const FIELD_MANAGER = 'recognition-operator';
export const MANAGED_BY_SELECTOR = `app.kubernetes.io/managed-by=${FIELD_MANAGER}`;
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';

export const TRITON_HTTP_PORT = 8000;
export const TRITON_GRPC_PORT = 8001;
export const TRITON_METRICS_PORT = 8002;

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

export function childName(rs: RecognitionService, component: Component): string {
  return `${rs.metadata.name}-${component}`;
}

/** Selector labels: stable for the life of the resource (Deployment selectors are immutable). */
export function selectorLabels(rs: RecognitionService, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'recognition-service',
    [INSTANCE_LABEL]: rs.metadata.name,
    [COMPONENT_LABEL]: component,
  };
}

export function commonLabels(rs: RecognitionService, component: Component): Record<string, string> {
  return {
    ...selectorLabels(rs, component),
    'app.kubernetes.io/part-of': 'recognition-service',
    'app.kubernetes.io/managed-by': FIELD_MANAGER,
  };
}

export function ownerReference(rs: RecognitionService): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: rs.metadata.name,
    uid: rs.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function childMeta(rs: RecognitionService, component: Component, name = childName(rs, component)): KubeObject['metadata'] {
  return {
    name,
    namespace: rs.metadata.namespace,
    labels: commonLabels(rs, component),
    ownerReferences: [ownerReference(rs)],
  };
}

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

/** The Triton gRPC address the API dials: DNS of the headless Service, resolved to every pod. */
export function tritonGrpcTarget(rs: RecognitionService, clusterDomain = DEFAULT_CLUSTER_DOMAIN): string {
  return `dns:///${childName(rs, 'triton')}.${rs.metadata.namespace}.svc.${clusterDomain}:${TRITON_GRPC_PORT}`;
}

export function apiUrl(rs: RecognitionService): string {
  return `http://${childName(rs, 'api')}.${rs.metadata.namespace}.svc:${rs.spec.api.port}`;
}
