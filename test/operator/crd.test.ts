/**
 * The CRD's scale subresource (`kubectl scale recsvc`, an HPA aimed at the resource): its
 * paths as the committed YAML carries them, the schema fields they name, and the status
 * the operator computes filling them in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CRD_FILES } from '../../tools/generate/render.js';
import { computeStatus } from '../../src/operator/status.js';
import { desiredState } from '../../src/operator/desired/index.js';
import { sampleResource } from './fixtures.js';

type Any = any; // the CRD and the manifests are plain JSON

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const version = (file: string): Any => parse(fs.readFileSync(path.join(ROOT, file), 'utf8')).spec.versions[0];

/** The schema of the field a `.a.b.c` path names (the scale subresource allows no array steps). */
function schemaAt(root: Any, jsonPath: string): Any {
  return jsonPath.slice(1).split('.').reduce((s: Any, key) => s?.properties?.[key], root);
}
const valueAt = (obj: Any, jsonPath: string): Any => jsonPath.slice(1).split('.').reduce((o: Any, key) => o?.[key], obj);

test('the committed CRD (and the chart copy) has a scale subresource on the API replica count', () => {
  for (const file of CRD_FILES) {
    assert.deepEqual(
      version(file).subresources,
      {
        status: {},
        scale: { specReplicasPath: '.spec.api.replicas.min', statusReplicasPath: '.status.api.readyReplicas', labelSelectorPath: '.status.api.selector' },
      },
      file,
    );
  }
});

test('the scale paths name an integer spec field, an integer status field and a string selector', () => {
  const v = version(CRD_FILES[0]);
  const { specReplicasPath, statusReplicasPath, labelSelectorPath } = v.subresources.scale;
  const schema = v.schema.openAPIV3Schema;
  assert.match(specReplicasPath, /^\.spec\.[a-z.]+$/i);
  assert.match(statusReplicasPath, /^\.status\.[a-z.]+$/i);
  assert.match(labelSelectorPath, /^\.status\.[a-z.]+$/i);
  const spec = schemaAt(schema, specReplicasPath);
  assert.equal(spec?.type, 'integer');
  assert.equal(spec.minimum, 1, 'no scale to zero');
  assert.ok(spec.default !== undefined, 'always set, so GET of the scale subresource never fails');
  assert.equal(schemaAt(schema, statusReplicasPath)?.type, 'integer');
  assert.equal(schemaAt(schema, labelSelectorPath)?.type, 'string');
});

test("the operator's status fills them: ready API pods and the API Deployment's selector as a string", () => {
  const rs = sampleResource();
  const v = version(CRD_FILES[0]);
  const { specReplicasPath, statusReplicasPath, labelSelectorPath } = v.subresources.scale;
  const observed = (replicas: number, ready: number) => ({
    metadata: { name: 'x', generation: 1 },
    spec: { replicas },
    status: { observedGeneration: 1, replicas, readyReplicas: ready, updatedReplicas: replicas, availableReplicas: ready },
  });
  rs.spec.api.replicas = { min: 3, max: 6 };
  rs.status = computeStatus(rs, { api: observed(3, 2), triton: observed(1, 1), pods: { api: [], triton: [] } }, new Date());
  assert.equal(valueAt(rs, specReplicasPath), 3);
  assert.equal(valueAt(rs, statusReplicasPath), 2, 'the API pods ready now, not the desired count');
  const selector: string = valueAt(rs, labelSelectorPath);
  assert.equal(selector, 'app.kubernetes.io/component=api,app.kubernetes.io/instance=vision,app.kubernetes.io/name=recognition-service');
  const dep: Any = desiredState(rs, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vision-api');
  assert.deepEqual(Object.fromEntries(selector.split(',').map((kv) => kv.split('='))), dep.spec.selector.matchLabels, "exactly the API Deployment's selector");
  assert.notEqual(rs.status.triton?.selector, selector, "Triton's pods are not the API's");
});
