/**
 * A canary's automatic rollout as a state machine kept in status.rollout (as Argo Rollouts
 * keeps its step in the Rollout's status): what the operator has decided survives a restart or
 * a change of leader, and the API pods' weight is read from it (desired/rollout.ts). Pure:
 * the reconciler reads the figures and records the events.
 *
 *   Analysing --pass, below maxWeight--> Analysing (weight + stepWeight, at most maxWeight)
 *   Analysing --pass at maxWeight------> Promoted (weight 100)
 *   Analysing --fail, failureLimit-th--> RolledBack (weight 0)
 *   Analysing --fail before, inconclusive, or Prometheus unreadable--> Analysing (weight held)
 *
 * Promoted and RolledBack are final for that canary: a new canary (another model or version),
 * a new stable model, or analysis removed and set again starts over.
 */
import type { CanaryAnalysis, RecognitionService, RolloutStatus } from '../api/types.js';
import { canaryModel, isAnalysedRollout, stableModel } from '../desired/rollout.js';
import { rolloutStatus } from '../status.js';
import { judge, sideFigures, type Figures } from './judge.js';

export interface RolloutEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface RolloutStep {
  status: RolloutStatus;
  events: RolloutEvent[];
}

const describe = (m: { name: string; version: string }) => `${m.name}${m.version ? ` version ${m.version}` : ''}`;

/** The seconds of metrics a check reads: windowSeconds, else the interval (checks that never overlap). */
export function windowOf(policy: CanaryAnalysis): number {
  return policy.windowSeconds ?? policy.intervalSeconds;
}

/**
 * The rollout as it stands before this reconcile's check: the spec's view without analysis;
 * with it, the rollout in the status when it is this canary's, else a new one at the spec's
 * weight.
 */
export function rolloutBefore(rs: RecognitionService, now: Date): RolloutStep {
  const policy = rs.spec.canary?.analysis;
  const canary = canaryModel(rs);
  if (!policy || !canary) return { status: rolloutStatus(rs), events: [] };
  if (isAnalysedRollout(rs)) return { status: rs.status!.rollout!, events: [] };
  const weight = rs.spec.canary!.weight;
  const message = `analysis started at weight ${weight}: a check every ${policy.intervalSeconds} s over ${windowOf(policy)} s of metrics`;
  return {
    status: {
      phase: 'Analysing',
      stable: stableModel(rs),
      canary: { name: canary.name, version: canary.version },
      canaryWeight: weight,
      analysis: { passedChecks: 0, failedChecks: 0, lastCheckTime: now.toISOString(), message },
    },
    events: [{ type: 'Normal', reason: 'RolloutStarted', message: `canary ${describe(canary)}: ${message}` }],
  };
}

/** Milliseconds until the next check (0 or less: due), or undefined when none will come. */
export function checkDueIn(status: RolloutStatus, policy: CanaryAnalysis, now: Date): number | undefined {
  if (status.phase !== 'Analysing' || !status.analysis) return undefined;
  return Date.parse(status.analysis.lastCheckTime) + policy.intervalSeconds * 1000 - now.getTime();
}

/** The rollout after a check, from the figures read (or the reason they could not be). */
export function afterCheck(status: RolloutStatus, policy: CanaryAnalysis, result: { figures: Figures } | { error: string }, now: Date): RolloutStep {
  const previous = status.analysis!;
  const canary = `canary ${describe(status.canary!)}`;
  const weight = status.canaryWeight;
  const next = (changes: Partial<RolloutStatus>, analysis: Partial<NonNullable<RolloutStatus['analysis']>>, event?: RolloutEvent): RolloutStep => ({
    status: { ...status, ...changes, analysis: { ...previous, lastCheckTime: now.toISOString(), ...analysis } },
    events: event ? [event] : [],
  });
  if ('error' in result) {
    const message = `weight ${weight} held: no check: ${result.error}`;
    // The last figures would read as this check's: none until one runs.
    const { stable: _stable, canary: _canary, ...counts } = previous;
    return {
      status: { ...status, analysis: { ...counts, lastCheckTime: now.toISOString(), message } },
      events: [{ type: 'Warning', reason: 'RolloutAnalysisUnavailable', message: `${canary}: ${message}` }],
    };
  }
  const verdict = judge(policy, result.figures);
  const figures = { stable: sideFigures(result.figures.stable), canary: sideFigures(result.figures.canary) };
  if (verdict.outcome === 'inconclusive') return next({}, { ...figures, message: `weight ${weight} held: ${verdict.message}` });
  if (verdict.outcome === 'fail') {
    const failedChecks = previous.failedChecks + 1;
    if (failedChecks >= policy.failureLimit) {
      const message = `rolled back (weight 0) after ${failedChecks} failed checks: ${verdict.message}`;
      return next({ phase: 'RolledBack', canaryWeight: 0 }, { ...figures, failedChecks, message }, { type: 'Warning', reason: 'RolloutRolledBack', message: `${canary}: ${message}` });
    }
    const message = `check failed (${failedChecks} of ${policy.failureLimit} allowed), weight ${weight} held: ${verdict.message}`;
    return next({}, { ...figures, failedChecks, message }, { type: 'Warning', reason: 'RolloutCheckFailed', message: `${canary}: ${message}` });
  }
  const passedChecks = previous.passedChecks + 1;
  if (weight >= policy.maxWeight) {
    const message = `promoted (weight 100) after ${passedChecks} passed checks: ${verdict.message}`;
    return next({ phase: 'Promoted', canaryWeight: 100 }, { ...figures, passedChecks, message }, { type: 'Normal', reason: 'RolloutPromoted', message: `${canary}: ${message}` });
  }
  const raised = Math.min(weight + policy.stepWeight, policy.maxWeight);
  const message = `weight ${weight} -> ${raised}: ${verdict.message}`;
  return next({ canaryWeight: raised }, { ...figures, passedChecks, message }, { type: 'Normal', reason: 'RolloutWeightRaised', message: `${canary}: ${message}` });
}
