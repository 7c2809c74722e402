import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tracingRequested, startTracing } from '../../src/telemetry/tracing.js';

test('tracing is off unless an OTEL_* variable asks for it', async () => {
  assert.equal(tracingRequested({}), false);
  assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }), false);
  assert.equal(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }), false);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), true);
  assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }), true);
  assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
  const off = await startTracing({});
  assert.equal(off.enabled, false);
  await off.shutdown();
});
