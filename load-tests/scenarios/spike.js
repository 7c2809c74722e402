// spike: a steady base rate, a sudden burst to SPIKE_RATE, then back to the base rate.
// Two questions: does the service survive the burst without errors beyond ERROR_RATE,
// and does latency come back to normal afterwards? The `recovery` scenario runs at the
// base rate after the burst and has its own latency threshold.
//   env: BASE_RATE (1), SPIKE_RATE (6), BASE_DURATION (30s), SPIKE_DURATION (20s),
//        RECOVERY_DURATION (40s), MAX_VUS (80), OP, P95_MS/P99_MS, ERROR_RATE (0.1)
import { envNumber, env, required } from '../lib/config.js';
import { iteration, workloadThresholds } from '../lib/workload.js';
import { correctnessThresholds, recognitionLimits, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
import { seconds, totalSeconds } from '../lib/stages.js';

const KEY = required('API_KEY');
const OP = env('OP', 'sync_base64');
const BASE = envNumber('BASE_RATE', 1);
const SPIKE = envNumber('SPIKE_RATE', 6);
const STAGES = [
  { target: Math.round(BASE * 60), duration: env('BASE_DURATION', '30s') },
  { target: Math.round(SPIKE * 60), duration: '3s' },
  { target: Math.round(SPIKE * 60), duration: env('SPIKE_DURATION', '20s') },
  { target: Math.round(BASE * 60), duration: '3s' },
];
const limits = recognitionLimits();

export const options = {
  scenarios: {
    spike: {
      executor: 'ramping-arrival-rate',
      startRate: Math.round(BASE * 60),
      timeUnit: '1m',
      stages: STAGES,
      preAllocatedVUs: envNumber('PRE_VUS', 4),
      maxVUs: envNumber('MAX_VUS', 80),
    },
    recovery: {
      executor: 'constant-arrival-rate',
      rate: Math.round(BASE * 60),
      timeUnit: '1m',
      startTime: `${totalSeconds(STAGES)}s`,
      duration: env('RECOVERY_DURATION', '40s'),
      preAllocatedVUs: 2,
      maxVUs: envNumber('MAX_VUS', 80),
    },
  },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: envNumber('ERROR_RATE', 0.1), checkRate: 0.9 }),
    ...workloadThresholds(OP, { recognition: { p95: 20000, p99: 29000 } }),
    // After the burst the base rate must be served within the normal objectives again.
    'http_req_duration{scenario:recovery}': [`p(95)<${limits.p95}`, `p(99)<${limits.p99}`],
    'http_req_failed{scenario:recovery}': ['rate<0.01'],
  },
};

export default function () {
  iteration(KEY, OP);
}

export const handleSummary = summaryHandler((data) => {
  const r = data.metrics['http_req_duration{scenario:recovery}'];
  const burst = seconds(env('SPIKE_DURATION', '20s'));
  return [
    '',
    `base ${BASE}/s, burst ${SPIKE}/s for ${burst} s, then ${env('RECOVERY_DURATION', '40s')} at base rate`,
    r ? `recovery phase: p50 ${r.values.med.toFixed(0)} ms, p95 ${r.values['p(95)'].toFixed(0)} ms (objective p95 < ${limits.p95} ms)` : 'recovery phase: no samples',
  ];
});
