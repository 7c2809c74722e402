/**
 * The Triton path of instrumentBackend over real gRPC on loopback: the `inference` CLIENT
 * span's context travels as W3C traceparent in the call metadata, latency is observed by
 * backend and model, and failed calls are counted by gRPC status code. The server here is a
 * recording KServe v2 endpoint (same proto as Triton): it shows the metadata it received and
 * fails a call with a chosen status, which neither Triton nor our v2 server can be asked to do.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { InferenceError } from '../../src/inference/backend.js';
import { inferenceService } from '../../src/inference/triton/proto.js';
import { TritonBackend } from '../../src/inference/triton/triton-backend.js';
import { instrumentBackend } from '../../src/telemetry/instrument.js';
import { Metrics } from '../../src/telemetry/metrics.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const received: Array<{ method: string; traceparent: string | undefined }> = [];
let failNext: grpc.status | undefined;
let server: grpc.Server;
let backend: TritonBackend;
const metrics = new Metrics({ defaultMetrics: false });

type Unary = (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, cb: grpc.sendUnaryData<unknown>) => void;
function recorded(method: string, answer: (req: Record<string, unknown>) => unknown): Unary {
  return (call, cb) => {
    const tp = call.metadata.get('traceparent')[0];
    received.push({ method, traceparent: tp === undefined ? undefined : String(tp) });
    if (method === 'ModelInfer' && failNext !== undefined) {
      const code = failNext;
      failNext = undefined;
      cb({ code, details: 'the test asked for this failure' });
      return;
    }
    cb(null, answer(call.request));
  };
}

before(async () => {
  server = new grpc.Server();
  server.addService(inferenceService().service, {
    ServerLive: recorded('ServerLive', () => ({ live: true })),
    ServerReady: recorded('ServerReady', () => ({ ready: true })),
    ModelReady: recorded('ModelReady', () => ({ ready: true })),
    ModelMetadata: recorded('ModelMetadata', () => ({
      name: 'centernet',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 2, 2, 3] }],
      outputs: [{ name: 'detections', datatype: 'FP32', shape: [-1, -1, 6] }],
    })),
    ModelInfer: recorded('ModelInfer', (req) => ({
      model_name: 'centernet',
      model_version: '1',
      id: req.id,
      outputs: [{ name: 'detections', datatype: 'FP32', shape: [1, 1, 6] }],
      raw_output_contents: [Buffer.from(new Float32Array([1, 2, 3, 4, 0.9, 0]).buffer)],
    })),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  backend = new TritonBackend({ url: `127.0.0.1:${port}`, modelName: 'centernet', modelVersion: '1' });
});
after(async () => {
  await backend?.close();
  await new Promise<void>((r) => server.tryShutdown(() => r()));
  await provider.shutdown();
  trace.disable();
});

const input = () => [{ name: 'images', datatype: 'FP32' as const, shape: [1, 2, 2, 3], data: new Float32Array(12) }];

test('the inference CLIENT span travels as traceparent; latency by backend and model', async () => {
  const instrumented = instrumentBackend(backend, metrics);
  await instrumented.start();
  assert.equal(instrumented.kind, 'triton');
  received.length = 0;
  exporter.reset();
  const out = await trace.getTracer('test').startActiveSpan('request', async (parent) => {
    try {
      return await instrumented.infer(input());
    } finally {
      parent.end();
    }
  });
  assert.deepEqual([...out.keys()], ['detections']);

  const spans = exporter.getFinishedSpans();
  const inference = spans.find((s) => s.name === 'inference');
  const parent = spans.find((s) => s.name === 'request');
  assert.ok(inference && parent);
  assert.equal(inference.kind, SpanKind.CLIENT);
  assert.equal(inference.parentSpanContext?.spanId, parent.spanContext().spanId);
  assert.equal(inference.attributes['rpc.system'], 'grpc');
  assert.equal(inference.attributes['rpc.method'], 'ModelInfer');
  assert.equal(inference.attributes['inference.model'], 'centernet');

  const infer = received.filter((r) => r.method === 'ModelInfer');
  assert.equal(infer.length, 1);
  const { traceId, spanId } = inference.spanContext();
  assert.equal(infer[0].traceparent, `00-${traceId}-${spanId}-01`, 'Triton receives the inference span as the parent of its own');

  const text = await metrics.render();
  assert.match(text, /inference_duration_seconds_count\{backend="triton",model="centernet"\} 1\n/);
});

test('a failed call: counted by gRPC status name, the span records the error and the status code', async () => {
  const instrumented = instrumentBackend(backend, metrics);
  exporter.reset();
  failNext = grpc.status.RESOURCE_EXHAUSTED;
  await assert.rejects(instrumented.infer(input()), (err: unknown) => err instanceof InferenceError && err.code === 'RESOURCE_EXHAUSTED');
  const span = exporter.getFinishedSpans().find((s) => s.name === 'inference');
  assert.ok(span);
  assert.equal(span.status.code, SpanStatusCode.ERROR);
  assert.equal(span.attributes['rpc.grpc.status_code'], grpc.status.RESOURCE_EXHAUSTED);
  const text = await metrics.render();
  assert.match(text, /triton_grpc_errors_total\{code="RESOURCE_EXHAUSTED"\} 1\n/);
  // failures are not latency samples
  assert.match(text, /inference_duration_seconds_count\{backend="triton",model="centernet"\} 1\n/);
});

test('without an active trace nothing is injected', async () => {
  received.length = 0;
  await backend.infer(input());
  assert.equal(received.find((r) => r.method === 'ModelInfer')?.traceparent, undefined);
});
