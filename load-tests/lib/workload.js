// What one iteration does, shared by the load, stress, spike, soak and mix scenarios.
// OP picks it: sync_base64 (default: the throughput question), sync_url, batch, or mix
// (weighted operations that look up and rate the ids the VU got back).
import exec from 'k6/execution';
import * as api from './api.js';
import { env, envNumber } from './config.js';
import { IMAGES, pick } from './images.js';
import { latencyThresholds, lookupLimits, processingSeries, recognitionLimits } from './thresholds.js';

export const OPERATIONS = ['sync_base64', 'sync_url', 'batch', 'lookup', 'feedback'];

/** Realistic default proportions (percent); MIX="sync_base64:50,sync_url:20,batch:10,lookup:15,feedback:5". */
export function parseMix(spec) {
  const weights = {};
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [op, w] = part.split(':');
    if (!OPERATIONS.includes(op) || !(Number(w) >= 0)) throw new Error(`MIX: "${part}" is not <operation>:<weight> with an operation of ${OPERATIONS.join(', ')}`);
    weights[op] = Number(w);
  }
  const total = Object.values(weights).reduce((a, b) => a + b, 0);
  if (total <= 0) throw new Error('MIX: the weights add up to zero');
  return weights;
}

const MIX = parseMix(env('MIX', 'sync_base64:50,sync_url:20,batch:10,lookup:15,feedback:5'));
const BATCH_MAX = Math.min(10, Math.max(1, envNumber('BATCH_MAX', 10)));
const RATINGS = [-1, 0, 1];

// Ids this VU got back, for lookups and feedback (bounded: a soak must not grow memory).
const recent = [];
function remember(id) {
  if (typeof id !== 'string') return;
  recent.push(id);
  if (recent.length > 200) recent.shift();
}

function chooseOp() {
  const total = Object.values(MIX).reduce((a, b) => a + b, 0);
  let r = Math.random() * total;
  for (const [op, w] of Object.entries(MIX)) {
    r -= w;
    if (r < 0) return op;
  }
  return 'sync_base64';
}

/** Runs one operation (lookup and feedback fall back to a sync until the VU has an id); true if it answered 200. */
export function runOperation(op, key) {
  if ((op === 'lookup' || op === 'feedback') && recent.length === 0) op = 'sync_base64';
  switch (op) {
    case 'sync_base64': {
      const r = api.sync({ base64: pick(IMAGES).base64 }, { key, endpoint: 'sync_base64' });
      remember(r.body && r.body.request_id);
      return r.res.status === 200;
    }
    case 'sync_url': {
      const r = api.sync({ url: pick(IMAGES).url }, { key, endpoint: 'sync_url' });
      remember(r.body && r.body.request_id);
      return r.res.status === 200;
    }
    case 'batch': {
      const n = 1 + Math.floor(Math.random() * BATCH_MAX);
      const r = api.batch(Array.from({ length: n }, () => pick(IMAGES).url), { key });
      for (const e of (r.body && r.body.results) || []) if (e.status === 'DONE') remember(e.request_id);
      return r.res.status === 200;
    }
    case 'lookup':
      return api.lookup(pick(recent), { key }).res.status === 200;
    case 'feedback':
      return api.feedback(pick(recent), pick(RATINGS), { key }).res.status === 200;
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

/** OP=sync_base64|sync_url|batch|mix. */
export function iteration(key, op = env('OP', 'sync_base64')) {
  return runOperation(op === 'mix' ? chooseOp() : op, key);
}

/** The endpoints an OP produces, for thresholds. */
export function endpointsFor(op = env('OP', 'sync_base64')) {
  if (op === 'mix') return Object.keys(MIX).filter((k) => MIX[k] > 0).concat(MIX.lookup > 0 || MIX.feedback > 0 ? ['sync_base64'] : []);
  if (!['sync_base64', 'sync_url', 'batch'].includes(op)) throw new Error(`OP must be sync_base64, sync_url, batch or mix (got "${op}")`);
  return [op];
}

/** Latency thresholds and processing series for the endpoints an OP produces. */
export function workloadThresholds(op, { abort = false, recognition, lookup } = {}) {
  const rec = recognitionLimits(recognition);
  const look = lookupLimits(lookup);
  const endpoints = [...new Set(endpointsFor(op))];
  const limits = {};
  for (const e of endpoints) {
    if (e === 'lookup' || e === 'feedback') limits[e] = look;
    // A batch of up to 10 images runs them with bounded concurrency: allow more time.
    else if (e === 'batch') limits[e] = { p95: rec.p95 * 4, p99: rec.p99 * 4 };
    else limits[e] = rec;
  }
  return {
    ...latencyThresholds(limits, { abort }),
    ...processingSeries(endpoints.filter((e) => e.startsWith('sync'))),
  };
}

/** A comma-separated list of keys (the runner passes WORKLOAD_KEYS so), at least one. */
export function keyList(spec, name = 'WORKLOAD_KEYS') {
  const keys = String(spec || '').split(',').map((k) => k.trim()).filter(Boolean);
  if (keys.length === 0) throw new Error(`${name} is empty: run the scenario through scripts/load.sh, which provisions the keys`);
  return keys;
}

/**
 * The key of this iteration: iterations take the keys in turn, whichever VU runs them, so
 * every key carries an equal share and the per-key state (limits, quota counters, cache
 * entries) is spread the way many clients spread it.
 */
export function rotatingKey(keys) {
  return keys[exec.scenario.iterationInTest % keys.length];
}
