/**
 * The CustomResourceDefinition object around the schema: names, the served version, the
 * status subresource and the columns `kubectl get recsvc` prints. tools/generate.ts
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
          subresources: { status: {} },
          additionalPrinterColumns: [
            // At a glance: ready or not, and why (CrashLoopBackOff, Unschedulable, RollingOut...).
            column('Ready', '.status.conditions[?(@.type=="Ready")].status'),
            column('Reason', '.status.conditions[?(@.type=="Ready")].reason'),
            column('API', '.status.api.summary', { description: 'API ready/desired replicas' }),
            column('Triton', '.status.triton.summary', { description: 'Triton ready/desired replicas' }),
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
