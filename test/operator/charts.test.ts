/** The Helm charts: lint and render clean with helm built by scripts/k8s-tools.sh. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findHelm } from './helpers/cluster.js';

type Any = any;
/** Plain JSON objects from (multi-document) YAML. */
const parseYaml = (text: string): Any[] => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OPERATOR_CHART = path.join(ROOT, 'charts/recognition-operator');
const SAMPLE_CHART = path.join(ROOT, 'charts/recognition-service-sample');
const helm = findHelm();
if (!helm) console.log('# helm chart tests skipped: helm not installed (scripts/k8s-tools.sh install)');

test('the chart carries the same CRD as crds/', () => {
  assert.equal(
    fs.readFileSync(path.join(OPERATOR_CHART, 'crds/cv.recognition.io_recognitionservices.yaml'), 'utf8'),
    fs.readFileSync(path.join(ROOT, 'crds/cv.recognition.io_recognitionservices.yaml'), 'utf8'),
  );
});

describe('helm', { skip: helm ? false : 'helm not installed' }, () => {
  const render = (chart: string, ...args: string[]): Any[] =>
    (parseYaml(execFileSync(helm!, ['template', 'rec', chart, '--namespace', 'recognition-system', ...args], { encoding: 'utf8' }))).filter(Boolean);

  for (const chart of [OPERATOR_CHART, SAMPLE_CHART]) {
    test(`helm lint --strict ${path.basename(chart)}`, () => {
      const r = spawnSync(helm!, ['lint', '--strict', chart], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(r.stdout, /\[(WARNING|ERROR)\]/);
    });
  }

  test('operator chart: ServiceAccount, least-privilege RBAC, Deployment running the operator', () => {
    const docs = render(OPERATOR_CHART, '--include-crds');
    const kinds = docs.map((d) => d.kind).sort();
    assert.deepEqual(kinds, [
      'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Role', 'RoleBinding', 'Service', 'ServiceAccount',
      'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding',
    ]);
    const role = docs.find((d) => d.kind === 'ClusterRole');
    const verbsFor = (group: string, resource: string) =>
      role.rules.filter((r: Any) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r: Any) => r.verbs);
    assert.deepEqual(verbsFor('cv.recognition.io', 'recognitionservices'), ['get', 'list', 'watch'], 'the resource itself is read-only');
    assert.deepEqual(verbsFor('', 'pods'), ['get', 'list', 'watch']);
    // To create the image-link signing key and watch it (metadata only); never to change or delete a Secret.
    assert.deepEqual(verbsFor('', 'secrets'), ['get', 'list', 'watch', 'create'], 'Secrets: read and create only');
    assert.ok(!role.rules.some((r: Any) => r.verbs.includes('*') || r.resources.includes('*') || r.apiGroups.includes('*')), 'no wildcards');
    const lease = docs.find((d) => d.kind === 'Role');
    assert.equal(lease.metadata.namespace, 'recognition-system');
    assert.deepEqual(lease.rules, [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }]);
    const dep = docs.find((d) => d.kind === 'Deployment');
    const c = dep.spec.template.spec.containers[0];
    assert.deepEqual(c.command, ['node', '/app/operator.js']);
    assert.equal(c.image, 'recognition-operator:0.1.0', "the operator's own image (operator.Dockerfile)");
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(dep.spec.template.spec.serviceAccountName, docs.find((d) => d.kind === 'ServiceAccount').metadata.name);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  });

  test('operator chart, namespaced install: a Role and RoleBinding per watched namespace with the same rules, no ClusterRole, WATCH_NAMESPACES', () => {
    const cluster = render(OPERATOR_CHART).find((d) => d.kind === 'ClusterRole');
    const docs = render(OPERATOR_CHART, '--set', 'watchNamespaces={team-a,team-b}');
    assert.ok(!docs.some((d) => d.kind === 'ClusterRole' || d.kind === 'ClusterRoleBinding'), 'no cluster-wide rights');
    for (const ns of ['team-a', 'team-b']) {
      const role = docs.find((d) => d.kind === 'Role' && d.metadata.namespace === ns);
      assert.deepEqual(role.rules, cluster.rules, `the Role in ${ns} has the ClusterRole's rules`);
      const binding = docs.find((d) => d.kind === 'RoleBinding' && d.metadata.namespace === ns);
      assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata.name });
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'rec-recognition-operator', namespace: 'recognition-system' }]);
    }
    const env = docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].env;
    assert.deepEqual(env.find((e: Any) => e.name === 'WATCH_NAMESPACES'), { name: 'WATCH_NAMESPACES', value: 'team-a,team-b' });
    const all = render(OPERATOR_CHART).find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].env;
    assert.equal(all.find((e: Any) => e.name === 'WATCH_NAMESPACES'), undefined, 'every namespace by default');
  });

  test("operator chart: a ValidatingAdmissionPolicy bound with Deny, matching only the operator's ServiceAccount, on every kind it writes", () => {
    const docs = render(OPERATOR_CHART);
    const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy');
    assert.equal(policy.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.equal(policy.spec.failurePolicy, 'Fail');
    assert.deepEqual(policy.spec.matchConditions.map((c: Any) => c.expression), ['request.userInfo.username == "system:serviceaccount:recognition-system:rec-recognition-operator"']);
    const matched = policy.spec.matchConstraints.resourceRules.flatMap((r: Any) => r.resources).sort();
    assert.deepEqual(matched, ['deployments', 'horizontalpodautoscalers', 'networkpolicies', 'poddisruptionbudgets', 'secrets', 'servicemonitors', 'services']);
    const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding');
    assert.equal(binding.spec.policyName, policy.metadata.name);
    assert.deepEqual(binding.spec.validationActions, ['Deny']);
    assert.ok(!render(OPERATOR_CHART, '--set', 'admissionPolicy.enabled=false').some((d) => d.kind.startsWith('ValidatingAdmissionPolicy')), 'off for clusters before 1.30');
  });

  test('sample chart: the Secret and the RecognitionService that refers to it', () => {
    const docs = render(SAMPLE_CHART, '--set', 'triton.storageCredentials.env.AWS_ACCESS_KEY_ID=x');
    const secret = docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'vision-secrets');
    assert.ok(secret.stringData.DATABASE_URL.startsWith('postgres://'));
    assert.equal(secret.stringData.IMAGE_URL_SECRET.length, 48, 'a random signing key is generated');
    const rs = docs.find((d) => d.kind === 'RecognitionService');
    assert.deepEqual(rs.spec.api.databaseUrlSecretRef, { name: 'vision-secrets', key: 'DATABASE_URL' });
    assert.deepEqual(rs.spec.triton.storageSecretRef, { name: 'vision-model-storage' });
    assert.ok(docs.some((d) => d.kind === 'Secret' && d.metadata.name === 'vision-model-storage'));

    const own = render(SAMPLE_CHART, '--set', 'secrets.existingSecret=mine', '--set', 'triton.storageUri=pvc://models/repo');
    assert.ok(!own.some((d) => d.kind === 'Secret'), 'no Secret when an existing one is named');
    const rs2 = own.find((d) => d.kind === 'RecognitionService');
    assert.equal(rs2.spec.api.redisUrlSecretRef.name, 'mine');
    assert.equal(rs2.spec.triton.storageSecretRef, undefined);

    const presigned = render(SAMPLE_CHART, '--set', 'api.imageStorage.s3.presignedUrls=true', '--set', 'api.imageStorage.s3.publicEndpoint=https://s3.example.com');
    const s3 = presigned.find((d) => d.kind === 'RecognitionService').spec.api.imageStorage.s3;
    assert.equal(s3.presignedUrls, true);
    assert.equal(s3.publicEndpoint, 'https://s3.example.com');
    assert.equal(rs.spec.api.imageStorage.s3.presignedUrls, undefined, 'off by default: the API link');
  });
});
