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
import { rateAt, seconds, staircase, totalSeconds } from '../lib/stages.js';
import exec from 'k6/execution';
import { Rate, Trend } from 'k6/metrics';

const KEY = required('API_KEY');
const OP = env('OP', 'sync_base64');
const START = envNumber('START_RATE', 0.5);
const MAX = envNumber('MAX_RATE', 8);
const STEPS = envNumber('STEPS', 8);
const RAMP = '5s';
const STAGES = staircase(START, MAX, STEPS, env('STEP_DURATION', '30s'), RAMP);
const STEP_S = seconds(env('STEP_DURATION', '30s')) + seconds(RAMP);

// Per step of the staircase: the latency and errors of iterations started in it, so the
// report shows where the curve bends (thresholds alone judge the whole run so far).
const stepLatency = new Trend('step_latency_ms', true);
const stepErrors = new Rate('step_errors');
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
    // Always true: they only make k6 keep one series per step for the report.
    ...Object.fromEntries(Array.from({ length: STEPS }, (_, i) => [
      [`step_latency_ms{step:${i + 1}}`, ['max>=0']], [`step_errors{step:${i + 1}}`, ['rate>=0']],
    ]).flat()),
  },
};

export default function () {
  const started = Date.now();
  const step = String(Math.min(STEPS, 1 + Math.floor((started - exec.scenario.startTime) / 1000 / STEP_S)));
  const ok = iteration(KEY, OP);
  stepLatency.add(Date.now() - started, { step });
  stepErrors.add(!ok, { step });
}

export const handleSummary = summaryHandler((data) => {
  const elapsed = data.state.testRunDurationMs / 1000;
  const planned = totalSeconds(STAGES);
  const broke = Object.values(data.metrics).some((m) => Object.values(m.thresholds || {}).some((t) => !t.ok));
  const at = rateAt(START, STAGES, Math.min(elapsed, planned));
  const steps = [];
  for (let i = 1; i <= STEPS; i++) {
    const t = data.metrics[`step_latency_ms{step:${i}}`];
    const e = data.metrics[`step_errors{step:${i}}`];
    if (!t || !t.values.count) continue;
    steps.push(`  step ${String(i).padStart(2)}: offered ${(START + ((MAX - START) * i) / STEPS).toFixed(2).padStart(6)}/s  started ${String(t.values.count).padStart(5)}`
      + `  p50 ${t.values.med.toFixed(0).padStart(6)} ms  p95 ${t.values['p(95)'].toFixed(0).padStart(6)} ms  errors ${((e ? e.values.rate : 0) * 100).toFixed(1)}%`);
  }
  return [
    '',
    `per step (${STEP_S} s each: ${RAMP} ramp + hold), latency of the iterations started in it:`,
    ...steps,
    '',
    broke
      ? `BROKE at an offered ${at.toFixed(2)}/s of ${OP} after ${elapsed.toFixed(0)} s (thresholds are judged over the whole run, ABORT_DELAY ${DELAY} after the first breach)`
      : `held up to the plan's last rate ${MAX}/s of ${OP} (${planned} s): raise MAX_RATE to find the limit`,
  ];
});
