// soak: a moderate constant rate of the realistic mix for a long time, to surface leaks,
// slow growth in latency, exhausted pools or disks. Compare the first and last windows
// in the JSON summary's time-bucketed trends, and watch the service's /metrics meanwhile.
//   env: SOAK_RATE (1), SOAK_DURATION (30m), OP (mix), MAX_VUS (30), P95_MS/P99_MS,
//        ERROR_RATE (0.005)
import { envNumber, env, required } from '../lib/config.js';
import { iteration, workloadThresholds } from '../lib/workload.js';
import { correctnessThresholds, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
import { seconds } from '../lib/stages.js';
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';

const KEY = required('API_KEY');
const OP = env('OP', 'mix');
const RATE = envNumber('SOAK_RATE', 1);
const DURATION = env('SOAK_DURATION', '30m');
const DURATION_S = seconds(DURATION);

// Latency of the first and last tenth of the run: growth between them is the soak's finding.
const early = new Trend('soak_first_tenth_ms', true);
const late = new Trend('soak_last_tenth_ms', true);

export const options = {
  scenarios: {
    soak: {
      executor: 'constant-arrival-rate',
      rate: Math.round(RATE * 60),
      timeUnit: '1m',
      duration: DURATION,
      preAllocatedVUs: envNumber('PRE_VUS', Math.ceil(RATE * 3)),
      maxVUs: envNumber('MAX_VUS', 30),
    },
  },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: envNumber('ERROR_RATE', 0.005), checkRate: 0.995 }),
    ...workloadThresholds(OP),
    soak_first_tenth_ms: ['max>=0'],
    soak_last_tenth_ms: ['max>=0'],
  },
};

export default function () {
  const started = Date.now();
  iteration(KEY, OP);
  const elapsed = (Date.now() - exec.scenario.startTime) / 1000;
  if (elapsed < DURATION_S / 10) early.add(Date.now() - started);
  else if (elapsed > (DURATION_S * 9) / 10) late.add(Date.now() - started);
}

export const handleSummary = summaryHandler((data) => {
  const a = data.metrics.soak_first_tenth_ms;
  const b = data.metrics.soak_last_tenth_ms;
  if (!a || !b || !a.values.count || !b.values.count) return ['', 'soak: too short to compare the first and last tenth'];
  const growth = ((b.values['p(95)'] - a.values['p(95)']) / a.values['p(95)']) * 100;
  return [
    '',
    `iteration p95: first tenth ${a.values['p(95)'].toFixed(0)} ms, last tenth ${b.values['p(95)'].toFixed(0)} ms (${growth >= 0 ? '+' : ''}${growth.toFixed(0)}%)`,
  ];
});
