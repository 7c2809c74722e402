// mix: the traffic a real client sends, at a constant arrival rate: sync base64 and sync
// URL submissions, batches of 1–10 URLs, lookups of ids returned earlier, and feedback
// on them. Each VU keeps the ids it got back; lookups and feedback draw from them.
//   env: RATE (operations/s, 2), DURATION (1m), MIX ("sync_base64:50,sync_url:20,
//        batch:10,lookup:15,feedback:5" — percent weights), BATCH_MAX (10),
//        MAX_VUS, P95_MS/P99_MS, LOOKUP_P95_MS/LOOKUP_P99_MS, ERROR_RATE (0.01)
import { envNumber, env, required } from '../lib/config.js';
import { iteration, workloadThresholds } from '../lib/workload.js';
import { correctnessThresholds, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';

const KEY = required('API_KEY');
const RATE = envNumber('RATE', 2);

export const options = {
  scenarios: {
    mix: {
      executor: 'constant-arrival-rate',
      rate: Math.round(RATE * 60),
      timeUnit: '1m',
      duration: env('DURATION', '1m'),
      preAllocatedVUs: envNumber('PRE_VUS', Math.ceil(RATE * 3)),
      maxVUs: envNumber('MAX_VUS', Math.ceil(RATE * 15) + 5),
    },
  },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: envNumber('ERROR_RATE', 0.01) }),
    ...workloadThresholds('mix'),
  },
};

export default function () {
  iteration(KEY, 'mix');
}

export const handleSummary = summaryHandler(() => ['', `offered ${RATE} operations/s, proportions ${env('MIX', 'sync_base64:50,sync_url:20,batch:10,lookup:15,feedback:5')}`]);
