/**
 * The CustomResourceDefinition object around the schema: names, the served version, the
 * status and scale subresources and the columns `kubectl get recsvc` prints. tools/generate.ts
 * writes it to crds/ and to the operator chart.
 */
import { GROUP, KIND, PLURAL, VERSION } from './types.js';
import { RecognitionServiceSchema } from './schema.js';

const column = (name: string, jsonPath: string, extra: { type?: string; description?: string; priority?: number } = {}) => ({
  name,
  type: extra.type ?? 'string',
  ...(extra.description && { description: extra.description }),
  ...(extra.priority !== undefined && { priority: extra.priority }),
  jsonPath,
});

/**
 * `kubectl scale recsvc` and anything else speaking the scale subresource act on the API
 * Deployment through spec.api.replicas.min: its count without an HPA, the HPA's floor with
 * one (an HPA owns the count; the operator never writes replicas next to it). Ready pods
 * are the current count; the selector is the API pods'.
 */
export const SCALE = {
  specReplicasPath: '.spec.api.replicas.min',
  statusReplicasPath: '.status.api.readyReplicas',
  labelSelectorPath: '.status.api.selector',
} as const;

export function customResourceDefinition() {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'recognition-service' } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: KIND.toLowerCase(),
        shortNames: ['recsvc'],
        categories: ['recognition'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {}, scale: SCALE },
          additionalPrinterColumns: [
            // At a glance: ready or not, and why (CrashLoopBackOff, Unschedulable, RollingOut...).
            column('Ready', '.status.conditions[?(@.type=="Ready")].status'),
            column('Reason', '.status.conditions[?(@.type=="Ready")].reason'),
            column('API', '.status.api.summary', { description: 'API ready/desired replicas' }),
            column('Triton', '.status.triton.summary', { description: 'Triton ready/desired replicas' }),
            column('Rollout', '.status.rollout.phase', { description: 'Stable, Canary, Analysing, Promoted or RolledBack' }),
            column('Canary', '.status.rollout.canaryWeight', { type: 'integer', description: 'Percent of requests the API pods send to the canary' }),
            column('Age', '.metadata.creationTimestamp', { type: 'date' }),
            column('URL', '.status.url', { priority: 1 }),
            column('Message', '.status.conditions[?(@.type=="Ready")].message', { priority: 1 }),
          ],
          schema: { openAPIV3Schema: RecognitionServiceSchema },
        },
      ],
    },
  };
}
