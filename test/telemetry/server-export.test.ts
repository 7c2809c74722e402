/**
 * The process wiring, end to end on loopback: startTracing() with the standard OTEL_*
 * variables exports the request's spans over OTLP/HTTP to a receiver, and METRICS_PORT
 * serves the same registry as the main port.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { startServer } from '../../src/server.js';
import { createDb } from '../../src/store/db.js';
import { createKey } from '../../src/store/keys.js';
import { createOrg } from '../../src/store/orgs.js';
import { startTracing } from '../../src/telemetry/tracing.js';
import { testConfig } from '../helpers/app.js';
import { readFixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/local-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

let database: TestDatabase;
let dataDir: string;
let receiver: http.Server;
const received: Array<{ url: string; contentType: string; body: string }> = [];

before(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-otlp-'));
  await chmod(dataDir, 0o755);
  // A minimal OTLP/HTTP collector: records what the exporter posts.
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', contentType: String(req.headers['content-type']), body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
});
after(async () => {
  await new Promise<void>((r) => receiver?.close(() => r()));
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

test('OTEL_EXPORTER_OTLP_ENDPOINT: the spans of a real request reach the collector; METRICS_PORT serves /metrics', { timeout: 120_000 }, async () => {
  const collector = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_SERVICE_NAME: 'recog-export-test' });
  assert.equal(tracing.enabled, true);
  const metricsPort = await freePort();
  const config = testConfig(database.url, dataDir, { PORT: '0', HOST: '127.0.0.1', METRICS_PORT: String(metricsPort) });
  const server = await startServer(config, pino({ level: 'silent' }));
  try {
    const base = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
    const db = createDb(database.url);
    const org = await createOrg(db, { name: 'otlp', balance: null });
    const { key } = await createKey(db, { orgId: org.id, name: 'otlp', classes: ['*'], monthlyQuota: 100, rateLimitPerMinute: 100, expiresAt: null });
    await db.destroy();

    const traceId = '5b8efff798038103d269b633813fc60c';
    const res = await fetch(`${base}/v1/cv/requests/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, traceparent: `00-${traceId}-eee19b7ec3c1b174-01` },
      body: JSON.stringify({ external_id: 'otlp-1', image_base64: readFixture('camera.png').toString('base64') }),
    });
    assert.equal(res.status, 200, await res.text());

    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(scrape.status, 200);
    assert.match(await scrape.text(), /http_request_duration_seconds_count\{method="POST",route="\/v1\/cv\/requests\/sync",status_code="200"\} 1/);

    await server.shutdown('test');
    await tracing.shutdown(); // flushes the batch processor
    await assert.rejects(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 'the metrics port closes with the server');

    const traces = received.filter((r) => r.url === '/v1/traces');
    assert.ok(traces.length >= 1, `the exporter posted to /v1/traces (got ${received.map((r) => r.url).join(', ')})`);
    const all = traces.map((r) => r.body).join('\n');
    for (const name of ['POST /v1/cv/requests/sync', 'auth', 'detect', 'inference', 'image.decode_preprocess']) {
      assert.ok(all.includes(name), `span ${name} exported`);
    }
    assert.ok(all.includes('recog-export-test'), 'service.name from OTEL_SERVICE_NAME');
    assert.ok(all.includes(traceId), 'the exported spans continue the caller trace');

    // Over a real socket the body is parsed on stream events, outside the request's context:
    // the handler's spans must still hang under the server span.
    type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string };
    const spans: OtlpSpan[] = traces.flatMap((r) =>
      (JSON.parse(r.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
    );
    const byName = (name: string) => spans.find((s) => s.name === name)!;
    const root = byName('POST /v1/cv/requests/sync');
    assert.equal(root.traceId, traceId);
    assert.equal(root.parentSpanId, 'eee19b7ec3c1b174');
    assert.equal(byName('auth').parentSpanId, root.spanId);
    assert.equal(byName('detect').parentSpanId, root.spanId);
    assert.equal(byName('inference').parentSpanId, byName('detect').spanId);
    assert.ok(spans.some((s) => s.name === 'db SELECT' && s.parentSpanId === root.spanId), 'admission (one SELECT of recognition_admit) under the server span');
    assert.ok(spans.some((s) => s.name === 'db UPDATE' && s.parentSpanId === root.spanId), 'the ending write under the server span');
  } finally {
    await server.shutdown('test');
    await tracing.shutdown().catch(() => {});
  }
});
