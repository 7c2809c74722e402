// stress: the offered rate climbs in steps until errors or latency break the thresholds;
// k6 then aborts (abortOnFail) and the report names the offered rate at that moment: the
// capacity of the deployment under these objectives. If nothing breaks, MAX_RATE was
// too low. Each step holds long enough for queues to fill.
//   env: START_RATE (0.5), MAX_RATE (8), STEPS (8), STEP_DURATION (30s), MAX_VUS (60),
//        OP (sync_base64 | sync_url | batch | mix), P95_MS/P99_MS, ERROR_RATE (0.05)
import { envNumber, env, required } from '../lib/config.js';
import { iteration, workloadThresholds } from '../lib/workload.js';
import { correctnessThresholds, TREND_STATS } from '../lib/thresholds.js';
import { summaryHandler } from '../lib/summary.js';
import { rateAt, staircase, totalSeconds } from '../lib/stages.js';

const KEY = required('API_KEY');
const OP = env('OP', 'sync_base64');
const START = envNumber('START_RATE', 0.5);
const MAX = envNumber('MAX_RATE', 8);
const STAGES = staircase(START, MAX, envNumber('STEPS', 8), env('STEP_DURATION', '30s'));
const DELAY = env('ABORT_DELAY', '15s');

export const options = {
  scenarios: {
    stress: {
      executor: 'ramping-arrival-rate',
      // Rates below 1/s are expressed per minute so fractional steps stay exact.
      startRate: Math.round(START * 60),
      timeUnit: '1m',
      stages: STAGES.map((s) => ({ target: Math.round(s.target * 60), duration: s.duration })),
      preAllocatedVUs: envNumber('PRE_VUS', 4),
      maxVUs: envNumber('MAX_VUS', 60),
    },
  },
  summaryTrendStats: TREND_STATS,
  thresholds: {
    ...correctnessThresholds({ errorRate: envNumber('ERROR_RATE', 0.05), checkRate: 0.95, abort: true, delay: DELAY }),
    ...workloadThresholds(OP, { abort: true }),
  },
};

export default function () {
  iteration(KEY, OP);
}

export const handleSummary = summaryHandler((data) => {
  const elapsed = data.state.testRunDurationMs / 1000;
  const planned = totalSeconds(STAGES);
  const broke = Object.values(data.metrics).some((m) => Object.values(m.thresholds || {}).some((t) => !t.ok));
  const at = rateAt(START, STAGES, Math.min(elapsed, planned));
  return [
    '',
    broke
      ? `BROKE at an offered ${at.toFixed(2)}/s of ${OP} after ${elapsed.toFixed(0)} s (thresholds are judged over the whole run, ABORT_DELAY ${DELAY} after the first breach)`
      : `held up to the plan's last rate ${MAX}/s of ${OP} (${planned} s): raise MAX_RATE to find the limit`,
  ];
});
