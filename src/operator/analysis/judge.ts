/**
 * One check of a canary against the stable model: pure arithmetic on the counts of both
 * sides over the check's window (./prometheus.ts reads them). The rules follow Flagger's and
 * Argo Rollouts' analyses, on this service's own signals: the share of first attempts that
 * failed (ERROR or timeout; a canary failure the stable model then answered still counts
 * against the canary), mean inference latency, and the share of "bad" feedback.
 */
import type { CanaryAnalysis, SideFigures } from '../api/types.js';

/** One side's raw counts over the window (Prometheus increase(), so not always whole). */
export interface SideCounts {
  /** First attempts, answered or failed. */
  requests: number;
  /** First attempts that failed: ERROR or timeout. */
  errors: number;
  /** Sum and count of answered inferences' latency, in seconds. */
  latencySumSeconds: number;
  latencyCount: number;
  ratings: number;
  badRatings: number;
}

export interface Figures {
  stable: SideCounts;
  canary: SideCounts;
}

export type Outcome = 'pass' | 'fail' | 'inconclusive';

export interface Judgement {
  outcome: Outcome;
  /** Why, in words: the figures and the limit each failed rule broke. */
  message: string;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const errorRate = (s: SideCounts) => (s.requests > 0 ? s.errors / s.requests : 0);
const meanLatencyMs = (s: SideCounts) => (s.latencyCount > 0 ? (s.latencySumSeconds / s.latencyCount) * 1000 : undefined);
const badShare = (s: SideCounts) => (s.ratings > 0 ? s.badRatings / s.ratings : 0);

/** One side's figures as status.rollout.analysis shows them. */
export function sideFigures(s: SideCounts): SideFigures {
  const latency = meanLatencyMs(s);
  return {
    requests: Math.round(s.requests),
    errorRatePercent: round(errorRate(s) * 100),
    ...(latency !== undefined ? { meanLatencyMs: round(latency, 1) } : {}),
    ratings: Math.round(s.ratings),
    ...(s.ratings > 0 ? { badFeedbackPercent: round(badShare(s) * 100) } : {}),
  };
}

const pct = (share: number) => `${round(share * 100)}%`;

/** `a` exceeds `b` by more than rounding: 10% - 9% is not above a 1-point limit. */
const above = (a: number, b: number) => a - b > 1e-9;

/**
 * Inconclusive while either side has fewer than minRequests first attempts in the window (a
 * canary the API pods do not route to yet, little traffic); else every rule that applies
 * must hold. Feedback is compared only once both sides have minFeedback ratings.
 */
export function judge(policy: CanaryAnalysis, f: Figures): Judgement {
  const few = (['canary', 'stable'] as const).filter((side) => f[side].requests < policy.minRequests);
  if (few.length > 0) {
    const counts = few.map((side) => `${side} ${Math.round(f[side].requests)}`).join(', ');
    return { outcome: 'inconclusive', message: `too few requests in the window to judge (${counts}; minRequests ${policy.minRequests})` };
  }
  const broken: string[] = [];
  const held: string[] = [];
  const errors = { canary: errorRate(f.canary), stable: errorRate(f.stable) };
  const errorText = `error rate ${pct(errors.canary)} vs ${pct(errors.stable)}`;
  if (above(errors.canary - errors.stable, policy.maxErrorRateIncrease / 100)) broken.push(`${errorText} (at most +${policy.maxErrorRateIncrease} points)`);
  else held.push(errorText);

  const latency = { canary: meanLatencyMs(f.canary), stable: meanLatencyMs(f.stable) };
  if (latency.canary !== undefined && latency.stable !== undefined) {
    const text = `mean latency ${round(latency.canary, 1)} ms vs ${round(latency.stable, 1)} ms`;
    if (above(latency.canary, latency.stable * (1 + policy.maxLatencyIncrease / 100))) broken.push(`${text} (at most +${policy.maxLatencyIncrease}%)`);
    else held.push(text);
  }

  if (f.canary.ratings >= policy.minFeedback && f.stable.ratings >= policy.minFeedback) {
    const bad = { canary: badShare(f.canary), stable: badShare(f.stable) };
    const text = `bad feedback ${pct(bad.canary)} vs ${pct(bad.stable)}`;
    if (above(bad.canary - bad.stable, policy.maxBadFeedbackIncrease / 100)) broken.push(`${text} (at most +${policy.maxBadFeedbackIncrease} points)`);
    else held.push(text);
  }
  return broken.length > 0
    ? { outcome: 'fail', message: `canary worse than stable: ${broken.join('; ')}` }
    : { outcome: 'pass', message: `canary as good as stable: ${held.join('; ')}` };
}
