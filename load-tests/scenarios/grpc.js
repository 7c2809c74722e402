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
//        API_KEY (optional: without it only phase 1 runs), INFER_P95_MS (3000)
import grpc from 'k6/net/grpc';
import encoding from 'k6/encoding';
import { check } from 'k6';
import * as api from '../lib/api.js';
import { env, envNumber } from '../lib/config.js';
import { REFERENCE_IMAGE } from '../lib/images.js';
import { unexpectedStatus } from '../lib/metrics.js';
import { correctnessThresholds, latencyThresholds, processingSeries, recognitionLimits, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
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
const WARMUP_S = 20;

const client = new grpc.Client();
client.load([import.meta.resolve('../../proto').replace(/^file:\/\//, '')], 'grpc_inference.proto');

// The raw FP32 tensor, base64-encoded once (k6's JSON form of a protobuf `bytes` field).
const TENSOR_FILE = env('TENSOR_FILE', '') || import.meta.resolve(`../.prepared/basketball1-stretch-${SIZE}.f32`);
const tensorBytes = open(TENSOR_FILE, 'b');
if (tensorBytes.byteLength !== SIZE * SIZE * 3 * 4) {
  throw new Error(`${TENSOR_FILE}: ${tensorBytes.byteLength} bytes, expected ${SIZE * SIZE * 3 * 4} for [1,${SIZE},${SIZE},3] FP32`);
}
const TENSOR_B64 = encoding.b64encode(tensorBytes, 'std');
const REQUEST = {
  model_name: MODEL,
  id: 'k6',
  inputs: [{ name: INPUT, datatype: 'FP32', shape: [1, SIZE, SIZE, 3] }],
  outputs: [{ name: OUTPUT }],
  raw_input_contents: [TENSOR_B64],
};

const scenarios = {
  // Loads the model's weights and JIT paths on both sides before anything is measured.
  warmup: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'warmup', maxDuration: `${WARMUP_S}s` },
  grpc: { executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'infer', startTime: `${WARMUP_S}s` },
};
if (KEY !== '') {
  scenarios.api = { executor: 'constant-vus', vus: VUS, duration: PHASE, exec: 'apiSync', startTime: `${WARMUP_S + PHASE_S + 5}s` };
}

export const options = {
  scenarios,
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: 0.01 }),
    'grpc_req_duration{endpoint:model_infer}': [`p(95)<${envNumber('INFER_P95_MS', 3000)}`, `p(99)<${envNumber('INFER_P99_MS', 6000)}`],
    'unexpected_status{endpoint:model_infer}': ['rate<0.01'],
    ...(KEY !== '' ? { ...latencyThresholds({ sync_base64: recognitionLimits() }), ...processingSeries(['sync_base64']) } : {}),
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
  const res = modelInfer('model_infer');
  unexpectedStatus.add(!(res && res.status === grpc.StatusOK), { endpoint: 'model_infer' });
}

export function apiSync() {
  api.sync({ base64: REFERENCE_IMAGE.base64 }, { key: KEY, endpoint: 'sync_base64' });
}

export const handleSummary = summaryHandler((data) => {
  const g = data.metrics['grpc_req_duration{endpoint:model_infer}'];
  const a = data.metrics['http_req_duration{endpoint:sync_base64}'];
  const lines = ['', `layer comparison, ${VUS} concurrent callers, ${PHASE} each, image ${REFERENCE_IMAGE.name}:`];
  const row = (name, t) => `  ${name.padEnd(28)}${(t.count / PHASE_S).toFixed(2).padStart(8)}/s  p50 ${t.med.toFixed(0).padStart(6)} ms  p95 ${t['p(95)'].toFixed(0).padStart(6)} ms  p99 ${t['p(99)'].toFixed(0).padStart(6)} ms`;
  if (g && g.values.count) lines.push(row(`gRPC ModelInfer (${TARGET})`, g.values));
  if (a && a.values.count) lines.push(row('API POST /v1/cv/requests/sync', a.values));
  if (g && a && g.values.count && a.values.count) {
    lines.push(`  API overhead (API − inference): p50 ${(a.values.med - g.values.med).toFixed(0)} ms, p95 ${(a.values['p(95)'] - g.values['p(95)']).toFixed(0)} ms;`
      + ` API throughput ${((a.values.count / g.values.count) * 100).toFixed(0)}% of the inference layer's`);
  }
  return lines;
});
