import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../src/telemetry/metrics.js';

test('domain verbs produce the documented series with bounded labels', async () => {
  const m = new Metrics({ defaultMetrics: false });
  m.observeHttp('POST', '/v1/cv/requests/sync', 200, 0.12);
  m.countRecognition('DONE', 'sync');
  m.countRecognition('replay', 'sync');
  m.observeInference('onnxruntime', 'centernet', 0.08);
  m.observeImageDownload(0.2, 12345, true);
  m.observeBatchSize(3);
  m.countRejection('rate_limit');
  m.countTritonError('UNAVAILABLE');
  m.countOrganisationLimitRejection('org-1', 'quota');
  m.countImageUrlSignatureFailure('expired');
  m.setLimiterDegraded(true);
  m.watchPool(() => ({ used: 2, free: 8, pending: 1 }));
  const end = m.trackInFlight();
  const text = await m.render();
  end();
  end(); // idempotent: the gauge must not go negative
  assert.match(text, /http_request_duration_seconds_count\{method="POST",route="\/v1\/cv\/requests\/sync",status_code="200"\} 1/);
  assert.match(text, /recognitions_total\{outcome="DONE",mode="sync"\} 1/);
  assert.match(text, /recognitions_total\{outcome="replay",mode="sync"\} 1/);
  assert.match(text, /inference_duration_seconds_count\{backend="onnxruntime",model="centernet"\} 1/);
  assert.match(text, /image_download_bytes_sum 12345/);
  assert.match(text, /batch_images_sum 3/);
  assert.match(text, /rejections_total\{reason="rate_limit"\} 1/);
  assert.match(text, /triton_grpc_errors_total\{code="UNAVAILABLE"\} 1/);
  assert.match(text, /organisation_limit_rejections_total\{organisation="org-1",limit="quota"\} 1/);
  assert.match(text, /image_url_signature_failures_total\{reason="expired"\} 1/);
  assert.match(text, /limiter_degraded 1/);
  assert.match(text, /db_pool_connections\{state="pending"\} 1/);
  assert.match(text, /http_requests_in_flight 1/);
  assert.match(await m.render(), /http_requests_in_flight 0/);
});

test('default process metrics are collected on the injected registry', async () => {
  const m = new Metrics();
  assert.match(await m.render(), /process_cpu_user_seconds_total/);
});
