// grpc: the inference layer alone, then the API, side by side on the same image.
// Phase 1 calls ModelInfer on the KServe v2 server (the local `recog inference-server`
// or a real Triton) with the reference image's model input tensor, prepared by the
// API's own preprocessing (load-tests/tools/prepare-tensor.ts). Phase 2 sends the same
// image to POST /v1/cv/requests/sync at the same concurrency. The report prints both
// and the difference: API overhead = API latency − inference latency (decode, resize,
// post-processing, storage, database, HTTP). Phases run one after the other so they
// don't compete for the CPU.
//   env: GRPC_TARGET (127.0.0.1:8001), MODEL_NAME (centernet), TENSOR_FILE (absolute),
//        INPUT_NAME (images), OUTPUT_NAME (detections), INPUT_SIZE (512),
//        VUS (2: concurrent callers in each phase), PHASE_DURATION (30s),
//        WARMUP_DURATION (20s: the warm-up's slot before phase 1), GRPC_LATENCY (true:
//        p95/p99 limits judge the run; false keeps the series for the report only),
//        API_KEY (optional: without it only phase 1 runs), INFER_P95_MS (3000)
// The report ends with the ratios of the API to the inference layer that scripts/load.sh
// gates after `grpc --start` (load-tests/lib/ratios.js, load-tests/baseline/grpc.json).
import grpc from 'k6/net/grpc';
import encoding from 'k6/encoding';
import { check } from 'k6';
import { Gauge } from 'k6/metrics';
import * as api from '../lib/api.js';
import { env, envBool, envNumber } from '../lib/config.js';
import { REFERENCE_IMAGE } from '../lib/images.js';
import { unexpectedStatus } from '../lib/metrics.js';
import { correctnessThresholds, latencyThresholds, processingSeries, recognitionLimits, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
import { grpcRatioReport, GRPC_API, GRPC_INFER, serverView, V2_FIELDS, V2_SNAPS } from '../lib/ratios.js';
import { seconds } from '../lib/stages.js';

const TARGET = env('GRPC_TARGET', '127.0.0.1:8001');
const MODEL = env('MODEL_NAME', 'centernet');
const INPUT = env('INPUT_NAME', 'images');
const OUTPUT = env('OUTPUT_NAME', 'detections');
const SIZE = envNumber('INPUT_SIZE', 512);
const KEY = env('API_KEY', '');
const VUS = envNumber('VUS', 2);
const PHASE = env('PHASE_DURATION', '30s');
const PHASE_S = seconds(PHASE);
// The gate's short runs give the warm-up less room (its two calls take a few seconds).
const WARMUP_S = seconds(env('WARMUP_DURATION', '20s'));
if (WARMUP_S < 6) throw new Error('WARMUP_DURATION must be at least 6s');
// GRPC_LATENCY=false: no absolute latency limit judges the run (the regression gate's runs
// in CI judge ratios only; an absolute time on a shared machine is noise).
const LATENCY = envBool('GRPC_LATENCY', true);

const client = new grpc.Client();
client.load([import.meta.resolve('../../proto').replace(/^file:\/\//, '')], 'grpc_inference.proto');

// The raw tensor, base64-encoded once (k6's JSON form of a protobuf `bytes` field): UINT8
// pixels for the models prepared here (their graph casts to float), or FP32.
const DATATYPE = env('INPUT_DATATYPE', 'UINT8');
const ELEMENT_BYTES = DATATYPE === 'FP32' ? 4 : 1;
const TENSOR_FILE = env('TENSOR_FILE', '') || import.meta.resolve(`../.prepared/basketball1-stretch-${SIZE}.${DATATYPE === 'FP32' ? 'f32' : 'u8'}`);
const tensorBytes = open(TENSOR_FILE, 'b');
if (tensorBytes.byteLength !== SIZE * SIZE * 3 * ELEMENT_BYTES) {
  throw new Error(`${TENSOR_FILE}: ${tensorBytes.byteLength} bytes, expected ${SIZE * SIZE * 3 * ELEMENT_BYTES} for [1,${SIZE},${SIZE},3] ${DATATYPE}`);
}
const TENSOR_B64 = encoding.b64encode(tensorBytes, 'std');
const REQUEST = {
  model_name: MODEL,
  id: 'k6',
  inputs: [{ name: INPUT, datatype: DATATYPE, shape: [1, SIZE, SIZE, 3] }],
  outputs: [{ name: OUTPUT }],
  raw_input_contents: [TENSOR_B64],
};

// The server's own view: cumulative ModelStatistics read between phases (gauge
// v2_stat{snap,field}); handleSummary turns the differences into the mean time queued
// (waiting for a batch or a free instance), mean compute and mean batch size per phase.
// What the client sees on top of queue + compute is transport: protobuf and 3 MB over HTTP/2.
const v2Stat = new Gauge('v2_stat');

const GAP_S = 6;
const scenarios = {
  // Loads the model's weights and JIT paths on both sides before anything is measured.
  warmup: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'warmup', maxDuration: `${WARMUP_S - 3}s` },
  snapshot_start: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'snapshot', startTime: `${WARMUP_S - 1}s`, env: { SNAPSHOT: 'start' } },
  grpc: { executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'infer', startTime: `${WARMUP_S}s`, gracefulStop: '3s' },
  snapshot_grpc: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'snapshot', startTime: `${WARMUP_S + PHASE_S + GAP_S - 1}s`, env: { SNAPSHOT: 'grpc' } },
};
if (KEY !== '') {
  scenarios.api = { executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'apiSync', startTime: `${WARMUP_S + PHASE_S + GAP_S}s`, gracefulStop: '3s' };
  // With the API on TRITON_URL (as `--start` sets it up) this shows the API's own batching.
  scenarios.snapshot_api = { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'snapshot', startTime: `${WARMUP_S + 2 * PHASE_S + 2 * GAP_S - 1}s`, env: { SNAPSHOT: 'api' } };
}

export const options = {
  scenarios,
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: 0.01 }),
    [`grpc_req_duration{endpoint:${GRPC_INFER}}`]: LATENCY
      ? [`p(95)<${envNumber('INFER_P95_MS', 3000)}`, `p(99)<${envNumber('INFER_P99_MS', 6000)}`]
      : ['max>=0'],
    [`unexpected_status{endpoint:${GRPC_INFER}}`]: ['rate<0.01'],
    ...(KEY !== '' ? { ...latencyThresholds({ [GRPC_API]: recognitionLimits() }, { reportOnly: !LATENCY }), ...processingSeries([GRPC_API]) } : {}),
    // Always true: they only make k6 keep these series for the report.
    ...Object.fromEntries(V2_SNAPS.flatMap((snap) => V2_FIELDS.map((field) => [`v2_stat{snap:${snap},field:${field}}`, ['value>=0']]))),
  },
};

let connected = false;
let warned = false;
function connect() {
  if (connected) return;
  // 4 MB is gRPC's default message cap; the tensor alone is 3 MB, so allow headroom.
  client.connect(TARGET, { plaintext: true, timeout: '10s', maxSendSize: 64 << 20, maxReceiveSize: 64 << 20 });
  connected = true;
}

function modelInfer(endpoint) {
  connect();
  const res = client.invoke('inference.GRPCInferenceService/ModelInfer', REQUEST, { timeout: '30s', tags: { endpoint } });
  const ok = res && res.status === grpc.StatusOK;
  const out = ok && res.message && Array.isArray(res.message.outputs) ? res.message.outputs : [];
  const raw = ok && res.message && Array.isArray(res.message.rawOutputContents) ? res.message.rawOutputContents : [];
  const idx = out.findIndex((o) => o.name === OUTPUT);
  if (!ok && !warned) {
    // Once per VU: enough to diagnose without flooding the log.
    warned = true;
    console.warn(`ModelInfer on ${TARGET} failed: status ${res && res.status}, ${res && res.error ? JSON.stringify(res.error) : 'no error detail'}`);
  }
  check(res, {
    [`${endpoint}: status OK`]: () => ok,
    [`${endpoint}: ${OUTPUT} FP32 [1,100,6]`]: () => idx >= 0 && out[idx].datatype === 'FP32' && out[idx].shape.map(Number).join(',') === '1,100,6',
    [`${endpoint}: raw output holds 100×6 floats`]: () => idx >= 0 && raw[idx] !== undefined && encoding.b64decode(raw[idx], 'std').byteLength === 100 * 6 * 4,
  }, { endpoint });
  return res;
}

export function warmup() {
  modelInfer('warmup');
  if (KEY !== '') api.sync({ base64: REFERENCE_IMAGE.base64 }, { key: KEY, endpoint: 'warmup' });
}

export function infer() {
  // Latency is k6's grpc_req_duration (tagged endpoint:model_infer): the call on the wire,
  // without k6's own JSON-to-protobuf conversion of the 4 MB request.
  const res = modelInfer(GRPC_INFER);
  unexpectedStatus.add(!(res && res.status === grpc.StatusOK), { endpoint: GRPC_INFER });
}

function statistics() {
  connect();
  const res = client.invoke('inference.GRPCInferenceService/ModelStatistics', { name: MODEL }, { timeout: '10s', tags: { endpoint: 'statistics' } });
  if (!res || res.status !== grpc.StatusOK || !res.message.modelStats || res.message.modelStats.length === 0) return null;
  const st = res.message.modelStats[0];
  const d = (x) => ({ count: Number((x && x.count) || 0), ns: Number((x && x.ns) || 0) });
  return {
    inferences: Number(st.inferenceCount || 0),
    executions: Number(st.executionCount || 0),
    success: d(st.inferenceStats && st.inferenceStats.success),
    queue: d(st.inferenceStats && st.inferenceStats.queue),
    compute: d(st.inferenceStats && st.inferenceStats.computeInfer),
  };
}

export function snapshot() {
  const st = statistics();
  if (!st) return;
  const values = {
    inferences: st.inferences, executions: st.executions,
    success_count: st.success.count, success_ns: st.success.ns,
    queue_count: st.queue.count, queue_ns: st.queue.ns,
    compute_count: st.compute.count, compute_ns: st.compute.ns,
  };
  for (const field of V2_FIELDS) v2Stat.add(values[field], { snap: __ENV.SNAPSHOT, field });
}

export function apiSync() {
  api.sync({ base64: REFERENCE_IMAGE.base64 }, { key: KEY, endpoint: GRPC_API });
}

export const handleSummary = summaryHandler((data) => {
  const g = data.metrics[`grpc_req_duration{endpoint:${GRPC_INFER}}`];
  const a = data.metrics[`http_req_duration{endpoint:${GRPC_API}}`];
  const lines = ['', `layer comparison, ${VUS} concurrent callers, ${PHASE} each, image ${REFERENCE_IMAGE.name}:`];
  const row = (name, t) => `  ${name.padEnd(28)}${(t.count / PHASE_S).toFixed(2).padStart(8)}/s  p50 ${t.med.toFixed(0).padStart(6)} ms  p95 ${t['p(95)'].toFixed(0).padStart(6)} ms  p99 ${t['p(99)'].toFixed(0).padStart(6)} ms`;
  if (g && g.values.count) lines.push(row(`gRPC ModelInfer (${TARGET})`, g.values));
  if (a && a.values.count) lines.push(row('API POST /v1/cv/requests/sync', a.values));
  for (const [phase, from] of [['grpc', 'start'], ['api', 'grpc']]) {
    const sv = serverView(data.metrics, from, phase);
    if (sv) {
      lines.push(`  v2 server during the ${phase} phase: ${sv.n} inferences, mean queued ${sv.queue.toFixed(0)} ms + compute ${sv.compute.toFixed(0)} ms`
        + ` (request ${sv.request.toFixed(0)} ms), mean batch ${sv.batch.toFixed(2)}`);
    }
  }
  if (g && a && g.values.count && a.values.count) {
    lines.push(`  API overhead (API − inference): p50 ${(a.values.med - g.values.med).toFixed(0)} ms, p95 ${(a.values['p(95)'] - g.values['p(95)']).toFixed(0)} ms;`
      + ` API throughput ${((a.values.count / g.values.count) * 100).toFixed(0)}% of the inference layer's`);
  }
  const apiView = serverView(data.metrics, 'grpc', 'api');
  if (a && a.values.count && apiView) {
    // k6's own gRPC client burns CPU on the 4 MB request next to the server on a small
    // machine; the server's own request time during the API phase is the cleaner baseline.
    lines.push(`  API mean latency ${a.values.avg.toFixed(0)} ms − v2 server mean request ${apiView.request.toFixed(0)} ms in that phase`
      + ` = ${(a.values.avg - apiView.request).toFixed(0)} ms outside inference (decode, resize, gRPC transport, database, storage, HTTP)`);
  }
  return [...lines, ...grpcRatioReport(data)];
});
