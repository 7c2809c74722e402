import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredState, type KubeObject } from '../../src/operator/desired/index.js';
import { modelStorage, tritonArgs } from '../../src/operator/desired/triton.js';
import { apiEnv } from '../../src/operator/desired/api.js';
import { dumpYaml } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { toClientModel } from '../../src/operator/kube.js';
import { sameJson } from '../../src/operator/status.js';
import { sampleResource } from './fixtures.js';
import fs from 'node:fs';
import { SCRAPE_TARGET_LABEL, TRITON_QUEUE_METRIC } from '../../src/operator/desired/policies.js';
import { loadConfig } from '../../src/config.js';

type Any = any; // manifests are plain JSON; tests read into them freely

function find(objs: KubeObject[], kind: string, name: string): Any {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind} ${name} is desired`);
  return o;
}

describe('desired state', () => {
  test('every child is owned by the resource (controller reference) and labelled as managed', () => {
    const rs = sampleResource();
    const { apply } = desiredState(rs, { serviceMonitor: true });
    assert.deepEqual(
      apply.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      [
        'Deployment/vision-api', 'Deployment/vision-triton',
        'HorizontalPodAutoscaler/vision-api', 'HorizontalPodAutoscaler/vision-triton',
        'NetworkPolicy/vision-triton',
        'PodDisruptionBudget/vision-api', 'PodDisruptionBudget/vision-triton',
        'Service/vision-api', 'Service/vision-triton',
        'ServiceMonitor/vision',
      ],
    );
    for (const o of apply) {
      assert.equal(o.metadata.namespace, 'prod');
      assert.deepEqual(o.metadata.ownerReferences, [
        { apiVersion: 'cv.recognition.io/v1alpha1', kind: 'RecognitionService', name: 'vision', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.equal(o.metadata.labels?.['app.kubernetes.io/managed-by'], 'recognition-operator');
    }
  });

  test('API Deployment: probes, env from secrets, Triton over the headless Service, metrics annotated', () => {
    const rs = sampleResource();
    const dep = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-api');
    const c = dep.spec.template.spec.containers[0];
    assert.equal(c.image, 'registry.example/recognition-service:1.2.3');
    assert.deepEqual(c.command, ['node', 'dist/server.js']);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    // Serving on while endpoints drop the pod; the grace period covers that delay and the drain.
    assert.deepEqual(c.lifecycle.preStop, { sleep: { seconds: 5 } });
    assert.equal(dep.spec.template.spec.terminationGracePeriodSeconds, 5 + 30 + 5);
    const env = Object.fromEntries(c.env.map((e: Any) => [e.name, e.value ?? e.valueFrom]));
    assert.deepEqual(env.DATABASE_URL, { secretKeyRef: { name: 'recog-secrets', key: 'DATABASE_URL' } });
    assert.deepEqual(env.REDIS_URL, { secretKeyRef: { name: 'recog-secrets', key: 'REDIS_URL' } });
    assert.equal(env.TRITON_URL, 'dns:///vision-triton.prod.svc.cluster.local:8001');
    assert.equal(env.TRITON_MODEL_NAME, 'centernet');
    assert.equal(env.MODEL_NAME, 'centernet', 'the API reads the catalog of the model Triton serves');
    assert.equal(env.SYNC_TIMEOUT_MS, '29000');
    assert.equal(env.RATE_LIMIT_PER_MINUTE, '10');
    assert.equal(env.METRICS_PORT, '9464');
    assert.equal(dep.spec.template.metadata.annotations['prometheus.io/port'], '9464');
    // An HPA owns replicas when max > min: the Deployment leaves the field alone.
    assert.equal(dep.spec.replicas, undefined);
    assert.deepEqual(dep.spec.selector.matchLabels, {
      'app.kubernetes.io/name': 'recognition-service', 'app.kubernetes.io/instance': 'vision', 'app.kubernetes.io/component': 'api',
    });
  });

  test('spec.api.consoleEnabled switches the console (CONSOLE_ENABLED, on by default) and consoleSessionTtlSeconds its sessions', () => {
    const on = Object.fromEntries(apiEnv(sampleResource()).map((e) => [e.name, e.value]));
    assert.equal(on.CONSOLE_ENABLED, 'true');
    assert.equal(on.CONSOLE_SESSION_TTL_SECONDS, String(12 * 3600));
    assert.equal(on.CONSOLE_SESSION_IDLE_SECONDS, String(30 * 60));
    const rs = sampleResource();
    rs.spec.api.consoleEnabled = false;
    rs.spec.api.consoleSessionTtlSeconds = 3600;
    rs.spec.api.consoleSessionIdleSeconds = 600;
    const off = Object.fromEntries(apiEnv(rs).map((e) => [e.name, e.value]));
    assert.equal(off.CONSOLE_ENABLED, 'false');
    assert.equal(off.CONSOLE_SESSION_TTL_SECONDS, '3600');
    assert.equal(off.CONSOLE_SESSION_IDLE_SECONDS, '600');
  });

  test('spec.api.detectionProfile and ensembleModels reach the API pods only when set; the API reads them back', () => {
    const unset = apiEnv(sampleResource()).map((e) => e.name);
    assert.ok(!unset.includes('DETECTION_PROFILE') && !unset.includes('ENSEMBLE_MODELS'), 'an unset profile leaves the pod template as it was');
    const rs = sampleResource();
    rs.spec.api.detectionProfile = 'accurate';
    rs.spec.api.ensembleModels = ['ssdlite', 'yolox'];
    rs.spec.triton.models = ['centernet', 'ssdlite', 'yolox'];
    const env = Object.fromEntries(apiEnv(rs).map((e) => [e.name, e.value]));
    assert.equal(env.DETECTION_PROFILE, 'accurate');
    assert.equal(env.ENSEMBLE_MODELS, 'ssdlite,yolox');
    const config = loadConfig(env);
    assert.equal(config.detectionProfile, 'accurate');
    assert.deepEqual(config.ensembleModels, ['ssdlite', 'yolox']);
    const triton = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton').spec.template.spec.containers[0];
    for (const m of rs.spec.triton.models) assert.ok(triton.args.includes(`--load-model=${m}`), `Triton loads ${m}`);
  });

  test('extra env overrides the operator’s own by name, and is appended otherwise', () => {
    const rs = sampleResource();
    rs.spec.api.env = [{ name: 'LOG_LEVEL', value: 'debug' }, { name: 'FOO', value: 'bar' }];
    const env = apiEnv(rs);
    assert.deepEqual(env.filter((e) => e.name === 'LOG_LEVEL'), [{ name: 'LOG_LEVEL', value: 'debug' }]);
    assert.deepEqual(env.at(-1), { name: 'FOO', value: 'bar' });
  });

  test('Triton Deployment: args, ports, probes sized for model loading, /dev/shm, GPU limits and defaults', () => {
    const rs = sampleResource();
    rs.spec.triton.startupTimeoutSeconds = 900;
    const dep = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton');
    const pod = dep.spec.template.spec;
    const c = pod.containers[0];
    assert.deepEqual(c.command, ['tritonserver']);
    assert.ok(c.args.includes('--model-repository=s3://models-bucket/recognition'));
    assert.ok(c.args.includes('--model-control-mode=explicit'));
    assert.ok(c.args.includes('--load-model=centernet'));
    assert.deepEqual(c.ports.map((p: Any) => p.containerPort), [8000, 8001, 8002]);
    assert.equal(c.startupProbe.httpGet.path, '/v2/health/ready');
    assert.equal(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold, 900);
    assert.equal(c.livenessProbe.httpGet.path, '/v2/health/live');
    assert.equal(c.readinessProbe.httpGet.path, '/v2/health/ready');
    assert.equal(c.resources.limits['nvidia.com/gpu'], '1');
    assert.deepEqual(pod.nodeSelector, { 'nvidia.com/gpu.present': 'true' });
    assert.deepEqual(pod.tolerations, [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    const shm = pod.volumes.find((v: Any) => v.name === 'dshm');
    assert.deepEqual(shm.emptyDir, { medium: 'Memory', sizeLimit: '1Gi' });
    assert.ok(c.volumeMounts.some((m: Any) => m.mountPath === '/dev/shm'));
  });

  test('pod hardening: API and Triton run non-root, without privileges, on a read-only root filesystem with /tmp an emptyDir', () => {
    const apply = desiredState(sampleResource(), { serviceMonitor: false }).apply;
    for (const name of ['vision-api', 'vision-triton']) {
      const pod = find(apply, 'Deployment', name).spec.template.spec;
      assert.equal(pod.automountServiceAccountToken, false, name);
      assert.equal(pod.securityContext.runAsNonRoot, true, name);
      assert.ok(pod.securityContext.runAsUser > 0, name);
      assert.deepEqual(pod.securityContext.seccompProfile, { type: 'RuntimeDefault' }, name);
      for (const c of pod.containers) {
        assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }, `${name}/${c.name}`);
        const tmp = c.volumeMounts.find((m: Any) => m.mountPath === '/tmp');
        assert.ok(tmp, `${name}/${c.name} has a writable /tmp`);
        assert.deepEqual(pod.volumes.find((v: Any) => v.name === tmp.name).emptyDir, {}, name);
      }
    }
    const triton = find(apply, 'Deployment', 'vision-triton').spec.template.spec;
    // NVIDIA's images carry the user triton-server, uid 1000; HOME on the emptyDir for CUDA's and Python's caches.
    assert.equal(triton.securityContext.runAsUser, 1000);
    assert.deepEqual(triton.containers[0].env, [{ name: 'HOME', value: '/tmp' }]);
  });

  test('CPU-only Triton: no GPU limit, no GPU node selector or toleration', () => {
    const rs = sampleResource();
    rs.spec.triton.gpus = 0;
    const pod = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton').spec.template.spec;
    assert.equal(pod.containers[0].resources.limits['nvidia.com/gpu'], undefined);
    assert.equal(pod.nodeSelector, undefined);
    assert.equal(pod.tolerations, undefined);
  });

  test('pvc:// storage mounts the claim read-only and points Triton at the sub-path', () => {
    assert.deepEqual(modelStorage('pvc://models/triton/repo/'), { repository: '/models/triton/repo', claimName: 'models' });
    assert.deepEqual(modelStorage('pvc://models'), { repository: '/models', claimName: 'models' });
    assert.deepEqual(modelStorage('gs://b/p'), { repository: 'gs://b/p' });
    const rs = sampleResource();
    rs.spec.triton.storageUri = 'pvc://models/repo';
    const pod = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton').spec.template.spec;
    assert.deepEqual(pod.volumes.find((v: Any) => v.name === 'models').persistentVolumeClaim, { claimName: 'models', readOnly: true });
    assert.ok(pod.containers[0].args.includes('--model-repository=/models/repo'));
  });

  test('storage credentials: environment for s3://, a mounted key file for gs://', () => {
    const rs = sampleResource();
    rs.spec.triton.storageSecretRef = { name: 'creds' };
    let pod = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton').spec.template.spec;
    assert.deepEqual(pod.containers[0].envFrom, [{ secretRef: { name: 'creds' } }]);
    rs.spec.triton.storageUri = 'gs://bucket/repo';
    pod = find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-triton').spec.template.spec;
    assert.equal(pod.containers[0].envFrom, undefined);
    assert.deepEqual(pod.containers[0].env, [
      { name: 'HOME', value: '/tmp' },
      { name: 'GOOGLE_APPLICATION_CREDENTIALS', value: '/var/run/secrets/model-storage/credentials.json' },
    ]);
    assert.deepEqual(pod.volumes.find((v: Any) => v.name === 'storage-credentials').secret, { secretName: 'creds' });
  });

  test('the catalog travels with the model: s3:// read with the storage credentials, pvc:// mounted, a ConfigMap wins', () => {
    const apiPod = (rs: ReturnType<typeof sampleResource>) => find(desiredState(rs, { serviceMonitor: false }).apply, 'Deployment', 'vision-api').spec.template.spec;
    const envOf = (pod: Any) => Object.fromEntries(pod.containers[0].env.map((e: Any) => [e.name, e.value ?? e.valueFrom]));

    // s3://: the object next to the model Triton serves, with Triton's Secret under the catalog's own names.
    const rs = sampleResource();
    rs.spec.triton.storageUri = 's3://models-bucket/recognition/';
    rs.spec.triton.modelName = 'shop';
    rs.spec.triton.storageSecretRef = { name: 'model-creds' };
    let pod = apiPod(rs);
    let env = envOf(pod);
    assert.equal(env.MODEL_CATALOG, 's3://models-bucket/recognition/shop/catalog.json');
    assert.deepEqual(env.MODEL_CATALOG_S3_ACCESS_KEY_ID, { secretKeyRef: { name: 'model-creds', key: 'AWS_ACCESS_KEY_ID' } });
    assert.deepEqual(env.MODEL_CATALOG_S3_SECRET_ACCESS_KEY, { secretKeyRef: { name: 'model-creds', key: 'AWS_SECRET_ACCESS_KEY' } });
    assert.deepEqual(env.MODEL_CATALOG_S3_SESSION_TOKEN, { secretKeyRef: { name: 'model-creds', key: 'AWS_SESSION_TOKEN', optional: true } });
    assert.deepEqual(env.MODEL_CATALOG_S3_REGION, { secretKeyRef: { name: 'model-creds', key: 'AWS_DEFAULT_REGION', optional: true } });
    // The image store's S3 settings and credentials stay its own.
    assert.equal(env.S3_REGION, 'us-east-1');
    assert.equal(env.AWS_ACCESS_KEY_ID, undefined);
    assert.equal(pod.volumes.some((v: Any) => v.name === 'model-repository' || v.name === 'catalog'), false);

    // s3:// without a Secret (IRSA, the node's role): the API's own AWS chain.
    delete rs.spec.triton.storageSecretRef;
    env = envOf(apiPod(rs));
    assert.equal(env.MODEL_CATALOG, 's3://models-bucket/recognition/shop/catalog.json');
    assert.equal(Object.keys(env).some((k) => k.startsWith('MODEL_CATALOG_S3_')), false);

    // pvc://: the model's directory of the same claim, read-only.
    rs.spec.triton.storageUri = 'pvc://models/triton/repo';
    pod = apiPod(rs);
    env = envOf(pod);
    assert.equal(env.MODEL_CATALOG, '/etc/recognition/model/catalog.json');
    assert.deepEqual(pod.volumes.find((v: Any) => v.name === 'model-repository'), { name: 'model-repository', persistentVolumeClaim: { claimName: 'models', readOnly: true } });
    assert.deepEqual(pod.containers[0].volumeMounts.find((m: Any) => m.name === 'model-repository'), {
      name: 'model-repository', mountPath: '/etc/recognition/model', subPath: 'triton/repo/shop', readOnly: true,
    });
    rs.spec.triton.storageUri = 'pvc://models';
    assert.equal(apiPod(rs).containers[0].volumeMounts.find((m: Any) => m.name === 'model-repository').subPath, 'shop');

    // A named ConfigMap wins over either repository, and no S3 credentials reach the API for it.
    for (const uri of ['s3://models-bucket/recognition', 'pvc://models/repo', 'gs://models-bucket/recognition']) {
      rs.spec.triton.storageUri = uri;
      rs.spec.triton.storageSecretRef = uri.startsWith('pvc://') ? undefined : { name: 'model-creds' };
      rs.spec.api.catalogConfigMapRef = { name: 'shop-catalog', key: 'catalog.json' };
      pod = apiPod(rs);
      env = envOf(pod);
      assert.equal(env.MODEL_CATALOG, '/etc/recognition/catalog/catalog.json', uri);
      assert.equal(Object.keys(env).some((k) => k.startsWith('MODEL_CATALOG_S3_')), false, uri);
      assert.deepEqual(pod.volumes.find((v: Any) => v.name === 'catalog').configMap, { name: 'shop-catalog', items: [{ key: 'catalog.json', path: 'catalog.json' }] });
      assert.equal(pod.volumes.some((v: Any) => v.name === 'model-repository'), false, uri);
    }
  });

  test('model control modes: explicit loads the listed models, poll polls, none loads all', () => {
    const rs = sampleResource();
    rs.spec.triton.models = ['centernet', 'other'];
    assert.deepEqual(tritonArgs(rs).filter((a) => a.startsWith('--load-model')), ['--load-model=centernet', '--load-model=other']);
    rs.spec.triton.modelControlMode = 'poll';
    rs.spec.triton.models = undefined;
    assert.ok(tritonArgs(rs).includes('--repository-poll-secs=30'));
    rs.spec.triton.modelControlMode = 'none';
    assert.ok(!tritonArgs(rs).some((a) => a.startsWith('--load-model') || a.startsWith('--repository-poll')));
    rs.spec.triton.extraArgs = ['--log-verbose=1'];
    assert.equal(tritonArgs(rs).at(-1), '--log-verbose=1');
  });

  test('Triton Service is headless with a named gRPC port (client-side round-robin)', () => {
    const svc = find(desiredState(sampleResource(), { serviceMonitor: false }).apply, 'Service', 'vision-triton');
    assert.equal(svc.spec.clusterIP, 'None');
    assert.deepEqual(svc.spec.ports.find((p: Any) => p.name === 'grpc'), { name: 'grpc', port: 8001, targetPort: 'grpc', protocol: 'TCP', appProtocol: 'grpc' });
  });

  test('HPAs: CPU for the API, Triton queue time for Triton, pass-through metrics; none when min = max', () => {
    const rs = sampleResource();
    let objs = desiredState(rs, { serviceMonitor: false }).apply;
    const apiHpa = find(objs, 'HorizontalPodAutoscaler', 'vision-api');
    assert.equal(apiHpa.spec.minReplicas, 2);
    assert.equal(apiHpa.spec.maxReplicas, 6);
    assert.equal(apiHpa.spec.metrics[0].resource.name, 'cpu');
    const tritonHpa = find(objs, 'HorizontalPodAutoscaler', 'vision-triton');
    assert.equal(tritonHpa.spec.metrics[0].pods.metric.name, 'triton_queue_time_us');

    const custom = [{ type: 'Pods', pods: { metric: { name: 'x' }, target: { type: 'AverageValue', averageValue: '5' } } }];
    rs.spec.autoscaling = { enabled: true, triton: { metrics: custom } };
    rs.spec.api.replicas = { min: 3, max: 3 };
    const state = desiredState(rs, { serviceMonitor: false });
    objs = state.apply;
    assert.deepEqual(find(objs, 'HorizontalPodAutoscaler', 'vision-triton').spec.metrics, custom);
    assert.ok(!objs.some((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === 'vision-api'));
    assert.ok(state.remove.some((r) => r.kind === 'HorizontalPodAutoscaler' && r.name === 'vision-api'));
    assert.equal(find(objs, 'Deployment', 'vision-api').spec.replicas, 3);
  });

  // Issue 31: the Prometheus Adapter rule for triton_queue_time_us reads Triton's nv_* series by pod.
  test("ServiceMonitor: selects both Services and scrapes their `metrics` port, Triton's 8002 included, open to scrapers", () => {
    const { apply } = desiredState(sampleResource(), { serviceMonitor: true });
    const sm = find(apply, 'ServiceMonitor', 'vision');
    const selects = (o: KubeObject) => Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v);
    assert.deepEqual(apply.filter((o) => o.kind === 'Service' && selects(o)).map((o) => o.metadata.name).sort(), ['vision-api', 'vision-triton']);
    assert.deepEqual(sm.spec.endpoints.map((e: Any) => [e.port, e.path]), [['metrics', '/metrics']]);
    // Every scraped series carries the Services' app.kubernetes.io/name: what the chart's
    // alerts, dashboards and adapter rule select on to tell our Triton and API from others.
    assert.deepEqual(sm.spec.targetLabels, [SCRAPE_TARGET_LABEL]);
    for (const name of ['vision-api', 'vision-triton']) assert.equal(find(apply, 'Service', name).metadata.labels?.[SCRAPE_TARGET_LABEL], 'recognition-service', name);
    const rules = fs.readFileSync(new URL('../../charts/recognition-operator/files/monitoring/rules.yaml', import.meta.url), 'utf8');
    assert.match(rules, /nv_inference_request_success\{app_kubernetes_io_name="recognition-service"\}/, 'the Triton alerts select on the copied label');
    // No namespaceSelector: the ServiceMonitor's own namespace, the resource's.
    assert.equal(sm.spec.namespaceSelector, undefined);
    const svc = find(apply, 'Service', 'vision-triton');
    const port = svc.spec.ports.find((p: Any) => p.name === 'metrics');
    assert.equal(port.port, 8002);
    const pod = find(apply, 'Deployment', 'vision-triton').spec.template.spec;
    assert.ok(pod.containers[0].ports.some((p: Any) => p.name === port.targetPort && p.containerPort === 8002), 'the target port is the container port Triton serves metrics on');
    assert.ok(pod.containers[0].args.includes('--metrics-port=8002'));
    const np = find(apply, 'NetworkPolicy', 'vision-triton');
    assert.ok(np.spec.ingress.some((r: Any) => !r.from && r.ports.some((p: Any) => p.port === 8002)), 'the metrics port is open to any scraper');
  });

  test("the shipped Prometheus Adapter rule serves the metric Triton's default HPA scales on, per pod, from the series the ServiceMonitor scrapes", () => {
    const values = parse(fs.readFileSync(new URL('../../charts/recognition-operator/files/monitoring/prometheus-adapter.yaml', import.meta.url), 'utf8'));
    const rule = values.rules.custom.find((r: Any) => r.name.as === TRITON_QUEUE_METRIC);
    assert.ok(rule, `a rule named ${TRITON_QUEUE_METRIC}`);
    assert.deepEqual(rule.resources.overrides, { namespace: { resource: 'namespace' }, pod: { resource: 'pod' } });
    assert.match(rule.seriesQuery, /^nv_inference_queue_duration_us\{/);
    // Only our Triton pods (the label the ServiceMonitor copies from the Services), not a
    // KServe or other Triton that the same Prometheus scrapes.
    const ours = `${SCRAPE_TARGET_LABEL.replace(/[./-]/g, '_')}="recognition-service"`;
    assert.ok(rule.seriesQuery.includes(ours), rule.seriesQuery);
    for (const metric of ['nv_inference_queue_duration_us', 'nv_inference_request_success']) assert.ok(rule.metricsQuery.includes(`${metric}{${ours},<<.LabelMatchers>>}`), `${metric} in ${rule.metricsQuery}`);
    for (const placeholder of ['<<.LabelMatchers>>', '<<.GroupBy>>']) assert.ok(rule.metricsQuery.includes(placeholder), placeholder);
    const hpa = find(desiredState(sampleResource(), { serviceMonitor: false }).apply, 'HorizontalPodAutoscaler', 'vision-triton');
    assert.equal(hpa.spec.metrics[0].pods.metric.name, rule.name.as);
  });

  test('NetworkPolicy: only API pods reach Triton inference ports', () => {
    const np = find(desiredState(sampleResource(), { serviceMonitor: false }).apply, 'NetworkPolicy', 'vision-triton');
    assert.equal(np.spec.podSelector.matchLabels['app.kubernetes.io/component'], 'triton');
    const inference = np.spec.ingress[0];
    assert.deepEqual(inference.from, [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'recognition-service', 'app.kubernetes.io/instance': 'vision', 'app.kubernetes.io/component': 'api' } } }]);
    assert.deepEqual(inference.ports.map((p: Any) => p.port), [8000, 8001]);
    assert.deepEqual(np.spec.ingress[1], { ports: [{ protocol: 'TCP', port: 8002 }] });
  });

  test('switched-off parts and a missing ServiceMonitor CRD', () => {
    const rs = sampleResource({ networkPolicy: { enabled: false }, podDisruptionBudget: { enabled: false, maxUnavailable: 1 } });
    const state = desiredState(rs, { serviceMonitor: false });
    assert.ok(!state.apply.some((o) => ['NetworkPolicy', 'PodDisruptionBudget', 'ServiceMonitor'].includes(o.kind)));
    assert.deepEqual(
      state.remove.map((r) => `${r.kind}/${r.name}`).sort(),
      ['NetworkPolicy/vision-triton', 'PodDisruptionBudget/vision-api', 'PodDisruptionBudget/vision-triton'],
    );
  });

  test('every manifest survives client-node serialization unchanged (NetworkPolicy `from` included)', () => {
    const rs = sampleResource();
    rs.spec.triton.affinity = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }] } };
    rs.spec.triton.storageSecretRef = { name: 'creds' };
    for (const o of desiredState(rs, { serviceMonitor: true }).apply) {
      const sent = parse(dumpYaml(toClientModel(o)));
      assert.ok(sameJson(sent, JSON.parse(JSON.stringify(o))), `${o.kind} ${o.metadata.name} unchanged`);
    }
  });

  test('pure: the same resource gives the same manifests, and the input is not changed', () => {
    const rs = sampleResource();
    const before = JSON.stringify(rs);
    assert.deepEqual(desiredState(rs, { serviceMonitor: true }), desiredState(rs, { serviceMonitor: true }));
    assert.equal(JSON.stringify(rs), before);
  });
});

describe('API image storage', () => {
  const apiPod = (rs: ReturnType<typeof sampleResource>) =>
    (desiredState(rs, { serviceMonitor: false }).apply.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vision-api') as any).spec.template.spec;

  test('a ReadWriteMany claim is mounted at DATA_DIR/images and the store stays local', () => {
    const rs = sampleResource();
    rs.spec.api.imageStorage = { pvc: { claimName: 'shared-images' } };
    const pod = apiPod(rs);
    assert.deepEqual(pod.volumes.find((v: any) => v.name === 'images'), { name: 'images', persistentVolumeClaim: { claimName: 'shared-images' } });
    assert.deepEqual(pod.containers[0].volumeMounts.find((m: any) => m.name === 'images'), { name: 'images', mountPath: '/data/images' });
    const env = apiEnv(rs);
    assert.equal(env.find((e) => e.name === 'IMAGE_STORE')?.value, 'local');
    assert.equal(env.find((e) => e.name === 'S3_ENDPOINT'), undefined);
  });

  test('presignedUrls sets IMAGE_URL_MODE=presigned and the public endpoint; off, neither is set', () => {
    const rs = sampleResource();
    const envValue = (name: string) => apiEnv(rs).find((e) => e.name === name)?.value;
    assert.equal(envValue('IMAGE_URL_MODE'), undefined);
    assert.equal(envValue('S3_PUBLIC_ENDPOINT'), undefined);
    rs.spec.api.imageStorage!.s3!.publicEndpoint = 'https://images.example.com';
    assert.equal(envValue('S3_PUBLIC_ENDPOINT'), undefined, 'the public endpoint only matters for presigned links');
    rs.spec.api.imageStorage!.s3!.presignedUrls = true;
    assert.equal(envValue('IMAGE_URL_MODE'), 'presigned');
    assert.equal(envValue('S3_PUBLIC_ENDPOINT'), 'https://images.example.com');
  });

  test('without imageUrlSecretRef the key comes from the operator-owned Secret; with it, from that Secret', () => {
    const rs = sampleResource();
    assert.deepEqual(apiEnv(rs).find((e) => e.name === 'IMAGE_URL_SECRET')?.valueFrom, { secretKeyRef: { name: 'vision-api-image-url', key: 'IMAGE_URL_SECRET' } });
    rs.spec.api.imageUrlSecretRef = { name: 'mine', key: 'K' };
    assert.deepEqual(apiEnv(rs).find((e) => e.name === 'IMAGE_URL_SECRET')?.valueFrom, { secretKeyRef: { name: 'mine', key: 'K' } });
  });
});

test("the API's pod template names the operator's signing Secret by uid, so a new Secret rolls the pods", () => {
  const annotationsOf = (uid?: string) => find(desiredState(sampleResource(), { serviceMonitor: false }, { signingSecretUid: uid }).apply, 'Deployment', 'vision-api').spec.template.metadata.annotations;
  assert.equal(annotationsOf('3f1c')['cv.recognition.io/image-url-secret-uid'], '3f1c');
  assert.equal(annotationsOf(undefined)['cv.recognition.io/image-url-secret-uid'], undefined, 'none when the spec names its own Secret');
});

describe('model versions and canary', () => {
  const deployments = (rs: ReturnType<typeof sampleResource>) => {
    const { apply } = desiredState(rs, { serviceMonitor: false });
    return { api: find(apply, 'Deployment', 'vision-api'), triton: find(apply, 'Deployment', 'vision-triton') };
  };
  const envOf = (dep: Any): Record<string, Any> => Object.fromEntries(dep.spec.template.spec.containers[0].env.map((e: Any) => [e.name, e.value ?? e.valueFrom]));
  const loads = (rs: ReturnType<typeof sampleResource>) => tritonArgs(rs).filter((a) => a.startsWith('--load-model')).map((a) => a.split('=')[1]);
  const CANARY_ENV = ['TRITON_MODEL_VERSION', 'CANARY_WEIGHT', 'CANARY_MODEL_NAME', 'CANARY_MODEL_VERSION', 'CANARY_MODEL_CATALOG'];

  test('no version and no canary: none of the rollout environment, so existing pod templates stay as they were', () => {
    const env = envOf(deployments(sampleResource()).api);
    for (const name of CANARY_ENV) assert.equal(env[name], undefined, name);
    assert.equal(env.TRITON_MODEL_NAME, 'centernet');
  });

  test('a stable version and a canary of another version of the same model: API environment only, the stable catalog shared', () => {
    const rs = sampleResource();
    rs.spec.triton.modelVersion = '3';
    rs.spec.canary = { modelVersion: '4', weight: 10 };
    const env = envOf(deployments(rs).api);
    assert.equal(env.TRITON_MODEL_VERSION, '3');
    assert.equal(env.CANARY_WEIGHT, '10');
    assert.equal(env.CANARY_MODEL_NAME, 'centernet');
    assert.equal(env.CANARY_MODEL_VERSION, '4');
    assert.equal(env.CANARY_MODEL_CATALOG, undefined, "the API's default: the stable model's catalog");
    assert.deepEqual(loads(rs), ['centernet'], 'one model directory: no extra --load-model');
    // Weight 0 keeps the canary configured (warm), answering nothing.
    rs.spec.canary.weight = 0;
    assert.equal(envOf(deployments(rs).api).CANARY_WEIGHT, '0');
  });

  test("a canary of another model: Triton loads what triton.models lists, and the API reads that model's catalog", () => {
    const rs = sampleResource();
    rs.spec.triton.storageSecretRef = { name: 'model-creds' };
    // The CRD requires the canary's model in triton.models (explicit mode).
    rs.spec.triton.models = ['centernet', 'centernet-v2'];
    rs.spec.canary = { modelName: 'centernet-v2', weight: 25 };
    let env = envOf(deployments(rs).api);
    assert.equal(env.CANARY_MODEL_NAME, 'centernet-v2');
    assert.equal(env.CANARY_MODEL_VERSION, undefined);
    assert.equal(env.MODEL_CATALOG, 's3://models-bucket/recognition/centernet/catalog.json');
    assert.equal(env.CANARY_MODEL_CATALOG, 's3://models-bucket/recognition/centernet-v2/catalog.json');
    assert.deepEqual(loads(rs), ['centernet', 'centernet-v2']);
    // The operator never adds the canary itself: the list is the SRE's (the CRD refuses this spec).
    rs.spec.triton.models = undefined;
    assert.deepEqual(loads(rs), ['centernet']);
    rs.spec.triton.modelControlMode = 'poll';
    rs.spec.triton.models = undefined;
    assert.deepEqual(loads(rs), [], 'poll mode loads the whole repository anyway');

    // pvc://: the canary model's directory mounted beside the stable one.
    rs.spec.triton.modelControlMode = 'explicit';
    rs.spec.triton.storageUri = 'pvc://models/repo';
    delete rs.spec.triton.storageSecretRef;
    const api = deployments(rs).api;
    env = envOf(api);
    assert.equal(env.CANARY_MODEL_CATALOG, '/etc/recognition/canary-model/catalog.json');
    assert.deepEqual(
      api.spec.template.spec.containers[0].volumeMounts.filter((m: Any) => m.name === 'model-repository').map((m: Any) => [m.mountPath, m.subPath]),
      [['/etc/recognition/model', 'repo/centernet'], ['/etc/recognition/canary-model', 'repo/centernet-v2']],
    );

    // A ConfigMap catalog: the canary's key is a second file of the same volume.
    rs.spec.api.catalogConfigMapRef = { name: 'catalogs', key: 'stable.json', canaryKey: 'v2.json' };
    const withMap = deployments(rs).api;
    assert.equal(envOf(withMap).CANARY_MODEL_CATALOG, '/etc/recognition/catalog/canary-catalog.json');
    assert.deepEqual(withMap.spec.template.spec.volumes.find((v: Any) => v.name === 'catalog').configMap.items, [
      { key: 'stable.json', path: 'catalog.json' },
      { key: 'v2.json', path: 'canary-catalog.json' },
    ]);
    // Without the key (refused by the CRD) no wrong catalog is named: the API sees no CANARY_MODEL_CATALOG.
    delete rs.spec.api.catalogConfigMapRef.canaryKey;
    assert.equal(envOf(deployments(rs).api).CANARY_MODEL_CATALOG, undefined);
  });

  test("a new stable version, a canary of a version or of a listed model, its weight, promotion and abort change the API's pod template only, never Triton's", () => {
    // Pinning a version the first time adds Triton's readiness gate (the operator loads the
    // pinned versions): one restart, then none for any version change.
    const unpinned = deployments(sampleResource());
    const pinned = sampleResource();
    pinned.spec.triton.modelVersion = '3';
    const before = deployments(pinned);
    assert.equal(unpinned.triton.spec.template.spec.readinessGates, undefined);
    assert.deepEqual(before.triton.spec.template.spec.readinessGates, [{ conditionType: 'cv.recognition.io/versions-loaded' }]);
    const steps: Array<[string, (rs: ReturnType<typeof sampleResource>) => void]> = [
      ['canary of version 4 at 10%', (rs) => ((rs.spec.triton.modelVersion = '3'), (rs.spec.canary = { modelVersion: '4', weight: 10 }))],
      ['raised to 50%', (rs) => ((rs.spec.triton.modelVersion = '3'), (rs.spec.canary = { modelVersion: '4', weight: 50 }))],
      ['promoted', (rs) => (rs.spec.triton.modelVersion = '4')],
    ];
    for (const [what, change] of steps) {
      const rs = sampleResource();
      change(rs);
      const after = deployments(rs);
      assert.ok(sameJson(after.triton, before.triton), `${what}: Triton's Deployment is unchanged (no restart)`);
      assert.ok(!sameJson(after.api.spec.template, before.api.spec.template), `${what}: the API rolls`);
    }

    // Another model, listed in triton.models beforehand (the one change that rolls Triton, by
    // choice): its canary, a weight change, promotion and abort leave Triton's Deployment alone.
    const listed = sampleResource();
    listed.spec.triton.models = ['centernet', 'centernet-v2'];
    const listedBefore = deployments(listed).triton;
    assert.ok(!sameJson(listedBefore.spec.template, before.triton.spec.template), 'listing a second model restarts Triton once');
    const otherSteps: Array<[string, (rs: ReturnType<typeof sampleResource>) => void]> = [
      ['canary of another model at 10%', (rs) => (rs.spec.canary = { modelName: 'centernet-v2', weight: 10 })],
      ['raised to 60%', (rs) => (rs.spec.canary = { modelName: 'centernet-v2', weight: 60 })],
      ['promoted (modelName is the canary, canary removed)', (rs) => (rs.spec.triton.modelName = 'centernet-v2')],
    ];
    for (const [what, change] of otherSteps) {
      const rs = sampleResource();
      rs.spec.triton.models = ['centernet', 'centernet-v2'];
      change(rs);
      assert.ok(sameJson(deployments(rs).triton, listedBefore), `${what}: Triton's Deployment is unchanged`);
      assert.deepEqual(loads(rs), ['centernet', 'centernet-v2'], `${what}: the same --load-model list`);
    }
  });
});
