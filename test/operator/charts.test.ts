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
      'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding',
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
    // pods/status, the readiness gate of Triton's pods: a policy of its own (namespaced-install.test.ts enforces it).
    const gate = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy' && d.metadata.name.endsWith('-triton-pod-gate'));
    assert.deepEqual(gate.spec.matchConstraints.resourceRules, [{ apiGroups: [''], apiVersions: ['*'], operations: ['UPDATE'], resources: ['pods/status'] }]);
    assert.deepEqual(gate.spec.matchConditions, policy.spec.matchConditions);
    for (const p of [policy, gate]) {
      const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding' && d.spec.policyName === p.metadata.name);
      assert.deepEqual(binding.spec.validationActions, ['Deny']);
    }
    assert.ok(!render(OPERATOR_CHART, '--set', 'admissionPolicy.enabled=false').some((d) => d.kind.startsWith('ValidatingAdmissionPolicy')), 'off for clusters before 1.30');
  });

  test("operator chart: a ServiceMonitor for the operator's metrics Service when asked for, with the interval and labels given", () => {
    assert.ok(!render(OPERATOR_CHART).some((d) => d.kind === 'ServiceMonitor'), 'off by default: the CRD may be missing');
    const docs = render(OPERATOR_CHART, '--set', 'monitoring.serviceMonitor.enabled=true', '--set', 'monitoring.serviceMonitor.interval=15s', '--set', 'monitoring.serviceMonitor.labels.release=kps');
    const sm = docs.find((d) => d.kind === 'ServiceMonitor');
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(sm.metadata.namespace, 'recognition-system');
    assert.equal(sm.metadata.labels.release, 'kps', 'extra labels, for the Prometheus that selects by them');
    assert.deepEqual(sm.spec.namespaceSelector, { matchNames: ['recognition-system'] });
    assert.deepEqual(sm.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '15s', honorLabels: true }]);
    // It selects exactly the operator's metrics Service, by its labels and a port of that name.
    const services = docs.filter((d) => d.kind === 'Service');
    const selected = services.filter((s) => Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
    assert.deepEqual(selected.map((s) => s.metadata.name), ['rec-recognition-operator-metrics']);
    const port = selected[0].spec.ports.find((p: Any) => p.name === 'metrics');
    assert.equal(port.targetPort, 'health', "the container's port that serves /metrics");
    const container = docs.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0];
    assert.ok(container.ports.some((p: Any) => p.name === 'health'), 'the target port exists on the pod');
  });

  test('operator chart: one ConfigMap per Grafana dashboard, with the sidecar label, when asked for', () => {
    assert.ok(!render(OPERATOR_CHART).some((d) => d.kind === 'ConfigMap'), 'off by default');
    const dir = path.join(OPERATOR_CHART, 'files/monitoring/dashboards');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    assert.deepEqual(files, ['api.json', 'k6.json', 'operator.json', 'triton.json']);
    const docs = render(OPERATOR_CHART, '--set', 'monitoring.dashboards.enabled=true', '--set', 'monitoring.dashboards.annotations.grafana_folder=Recognition');
    const maps = docs.filter((d) => d.kind === 'ConfigMap');
    assert.deepEqual(maps.map((m) => Object.keys(m.data)).flat().sort(), files, 'one ConfigMap per file, keyed by the file name');
    for (const m of maps) {
      assert.equal(m.metadata.namespace, 'recognition-system');
      assert.equal(m.metadata.labels.grafana_dashboard, '1', 'the label the Grafana sidecar selects by');
      assert.equal(m.metadata.annotations.grafana_folder, 'Recognition');
      const [file, text] = Object.entries(m.data)[0] as [string, string];
      // Shipped verbatim: Helm must not have read the panels' {{label}} legends as templates.
      assert.deepEqual(JSON.parse(text), JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')), `${file} is the file's dashboard`);
      assert.match(JSON.parse(text).uid, /^recognition-/);
    }
    const relabelled = render(OPERATOR_CHART, '--set', 'monitoring.dashboards.enabled=true', '--set', 'monitoring.dashboards.labels.team=vision');
    assert.ok(relabelled.filter((d) => d.kind === 'ConfigMap').every((m) => m.metadata.labels.team === 'vision' && !m.metadata.annotations), 'labels from values; no annotations unless given');
  });

  test('operator chart: a PrometheusRule with the groups of files/monitoring/rules.yaml, runbook links rewritten to runbookBaseUrl', () => {
    assert.ok(!render(OPERATOR_CHART).some((d) => d.kind === 'PrometheusRule'), 'off by default: the CRD may be missing');
    const file = parseYaml(fs.readFileSync(path.join(OPERATOR_CHART, 'files/monitoring/rules.yaml'), 'utf8'))[0];
    const alerts = (groups: Any[]): Any[] => groups.flatMap((g: Any) => g.rules).filter((r: Any) => r.alert);
    const plain = render(OPERATOR_CHART, '--set', 'monitoring.prometheusRule.enabled=true').find((d) => d.kind === 'PrometheusRule');
    assert.equal(plain.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(plain.metadata.namespace, 'recognition-system');
    assert.deepEqual(plain.spec.groups, file.groups, 'the file verbatim when no runbookBaseUrl is set');
    assert.ok(alerts(plain.spec.groups).some((r) => r.annotations.description.includes('{{ $labels.')), 'alert templates reach Prometheus untouched');

    const base = 'https://runbooks.example.com/recognition/runbooks.md';
    const rule = render(OPERATOR_CHART, '--set', 'monitoring.prometheusRule.enabled=true', '--set', `monitoring.runbookBaseUrl=${base}`, '--set', 'monitoring.prometheusRule.labels.release=kps')
      .find((d) => d.kind === 'PrometheusRule');
    assert.equal(rule.metadata.labels.release, 'kps', 'extra labels, for the Prometheus that selects rules by them');
    const rendered = alerts(rule.spec.groups);
    assert.equal(rendered.length, alerts(file.groups).length);
    for (const [i, want] of alerts(file.groups).entries()) {
      const anchor = String(want.annotations.runbook_url).replace(/^docs\/runbooks\.md/, '');
      assert.match(anchor, /^#[a-z0-9-]+$/);
      assert.equal(rendered[i].annotations.runbook_url, base + anchor, `${want.alert}: the section in the configured runbook`);
      assert.deepEqual({ ...rendered[i], annotations: { ...rendered[i].annotations, runbook_url: want.annotations.runbook_url } }, want, `${want.alert}: otherwise unchanged`);
    }
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
