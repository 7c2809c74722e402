// load: a constant arrival rate (open model: new calls arrive whether or not the service
// keeps up) for a fixed time. Answers "does it sustain RATE calls/s within the latency
// objectives?". Unfinished iterations show as dropped_iterations in the report.
//   env: RATE (calls/s, 2), DURATION (1m), PRE_VUS (RATE*2), MAX_VUS (RATE*10 + 5),
//        OP (sync_base64 | sync_url | batch | mix), P95_MS/P99_MS, ERROR_RATE (0.01)
import { envNumber, env, required } from '../lib/config.js';
import { iteration, workloadThresholds } from '../lib/workload.js';
import { correctnessThresholds, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';

const KEY = required('API_KEY');
const OP = env('OP', 'sync_base64');
const RATE = envNumber('RATE', 2);

export const options = {
  scenarios: {
    load: {
      executor: 'constant-arrival-rate',
      // Per minute, so fractional rates (RATE=0.5) stay exact.
      rate: Math.round(RATE * 60),
      timeUnit: '1m',
      duration: env('DURATION', '1m'),
      preAllocatedVUs: envNumber('PRE_VUS', Math.ceil(RATE * 2)),
      maxVUs: envNumber('MAX_VUS', Math.ceil(RATE * 10) + 5),
    },
  },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: envNumber('ERROR_RATE', 0.01) }),
    ...workloadThresholds(OP),
    // Falling behind the arrival rate is a failure of "sustains RATE".
    dropped_iterations: [`count<=${envNumber('MAX_DROPPED', Math.ceil(RATE))}`],
  },
};

export default function () {
  iteration(KEY, OP);
}

export const handleSummary = summaryHandler((data) => [
  '',
  `offered ${RATE}/s of ${OP}; achieved ${(data.metrics.iterations?.values.rate ?? 0).toFixed(2)} iterations/s`,
]);
