/**
 * Status of a RecognitionService from what its children report: pure, given the clock.
 * Ready is True only when each component has at least `replicas.min` available pods of
 * its current template, and never while a pod crash-loops, was OOMKilled, cannot pull
 * its image or cannot be scheduled, whatever the Deployment's counters say.
 */
import type {
  ComponentStatus,
  Condition,
  ConditionStatus,
  ConditionType,
  FailureRecord,
  RecognitionService,
  RecognitionServiceStatus,
  RolloutStatus,
} from './api/types.js';
import { apiUrl, childName, selectorLabels, tritonGrpcTarget, type Component } from './desired/naming.js';
import { canaryModel, stableModel } from './desired/rollout.js';

/** The parts of a Deployment the status reads. */
export interface ObservedDeployment {
  metadata: { name: string; generation?: number; annotations?: Record<string, string> };
  spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

export interface ObservedContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: { startedAt?: string | Date }; terminated?: { reason?: string; exitCode?: number } };
  lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string; startedAt?: string | Date; finishedAt?: string | Date } };
}

/** The parts of a Pod the status reads. */
export interface ObservedPod {
  metadata: { name: string; uid?: string; labels?: Record<string, string>; deletionTimestamp?: unknown };
  spec?: { hostNetwork?: boolean };
  status?: {
    podIP?: string;
    phase?: string;
    startTime?: string | Date;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string | Date }>;
    containerStatuses?: ObservedContainerStatus[];
    initContainerStatuses?: ObservedContainerStatus[];
  };
}

/** The parts of a HorizontalPodAutoscaler the status reads. */
export interface ObservedAutoscaler {
  metadata: { name: string };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

/** Restarts within this window, at or above the threshold, make a crash loop even while Running. */
export const CRASH_WINDOW_MS = 10 * 60_000;
export const CRASH_RESTART_THRESHOLD = 3;

export interface Observed {
  api?: ObservedDeployment;
  triton?: ObservedDeployment;
  pods: Record<Component, ObservedPod[]>;
  /** Error of the last apply, if it failed. */
  reconcileError?: string;
  /** Its reason when not the generic ReconcileError (FieldConflict: fields left to another manager). */
  reconcileReason?: string;
  /** The cluster's DNS domain for the Triton endpoint (default cluster.local). */
  clusterDomain?: string;
  /** The HPAs this resource owns, by component (none: autoscaling off for it). */
  autoscalers?: Partial<Record<Component, ObservedAutoscaler>>;
  /** The rollout this reconcile decided (analysis/progress.ts); default: the spec's view, rolloutStatus(). */
  rollout?: RolloutStatus;
}

const time = (v: string | Date | undefined): number | undefined => {
  const t = v === undefined ? NaN : new Date(v).getTime();
  return Number.isNaN(t) ? undefined : t;
};

/**
 * How many of a container's restarts happened within the window before `now`, from the
 * pod's own status, so the answer is the same after an operator restart or a leader
 * change. The pod status keeps the restart count and the times of the last run and the
 * current one: the current run's start is the latest restart, the last run's start the
 * one before it (when there were two). Every restart of a pod younger than the window is
 * in it; for an older pod the earlier restarts are counted at the pace of the last
 * cycle (start to start), never more than the count. Without timestamps only a young pod
 * counts.
 */
export function restartsWithin(pod: ObservedPod, c: ObservedContainerStatus, now: Date, windowMs = CRASH_WINDOW_MS): number {
  const count = c.restartCount ?? 0;
  if (count === 0) return 0;
  const since = now.getTime() - windowMs;
  const podStart = time(pod.status?.startTime);
  if (podStart !== undefined && podStart >= since) return count;
  // The latest restart: the running container's start, else the exit it follows (waiting for the next start).
  const latest = time(c.state?.running?.startedAt) ?? time(c.lastState?.terminated?.finishedAt);
  if (latest === undefined || latest < since) return 0;
  const previous = count >= 2 && c.state?.running ? time(c.lastState?.terminated?.startedAt) : undefined;
  if (previous === undefined || previous < since) return 1;
  const cycle = Math.max(latest - previous, 1_000);
  return Math.min(count, 2 + Math.floor((previous - since) / cycle));
}

/** Container waiting reasons that mean the pod will not come up by itself. */
export const FAILING_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

interface ComponentHealth {
  status: ComponentStatus;
  ready: boolean;
  progressing: boolean;
  progressMessage: string;
  failure?: { reason: string; message: string };
}

/** Why a pod will not serve, or undefined: the first failure found, most specific first. */
function podFailure(component: Component, pod: ObservedPod, now: Date): { reason: string; message: string } | undefined {
  const containers = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of containers) {
    const reason = c.state?.waiting?.reason;
    const last = c.lastState?.terminated;
    const recentExit = last?.finishedAt !== undefined && now.getTime() - new Date(last.finishedAt).getTime() < CRASH_WINDOW_MS;
    if (c.state?.terminated?.reason === 'OOMKilled' || (last?.reason === 'OOMKilled' && (recentExit || reason === 'CrashLoopBackOff'))) {
      return {
        reason: 'OOMKilled',
        message: `pod ${pod.metadata.name} container ${c.name} was OOMKilled (out of memory: raise its memory limit), ${c.restartCount ?? 0} restarts`,
      };
    }
    if (reason && FAILING_REASONS.has(reason)) {
      const detail = last ? ` (last exit ${last.exitCode ?? '?'}${last.reason ? ` ${last.reason}` : ''})` : '';
      const why = c.state?.waiting?.message && reason !== 'CrashLoopBackOff' ? `: ${c.state.waiting.message}` : '';
      const hint = component === 'triton' && reason === 'CrashLoopBackOff' ? '; Triton exits when a model fails to load, see its log' : '';
      return { reason, message: `pod ${pod.metadata.name} container ${c.name}: ${reason}${why}${detail}, ${c.restartCount ?? 0} restarts${hint}` };
    }
    const restarts = restartsWithin(pod, c, now);
    if (restarts >= CRASH_RESTART_THRESHOLD) {
      const detail = last ? ` (last exit ${last.exitCode ?? '?'}${last.reason ? ` ${last.reason}` : ''})` : '';
      return {
        reason: 'CrashLooping',
        message: `pod ${pod.metadata.name} container ${c.name} restarted ${restarts} times in ${CRASH_WINDOW_MS / 60_000} min${detail}`,
      };
    }
  }
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return { reason: 'Unschedulable', message: `pod ${pod.metadata.name} cannot be scheduled: ${scheduled.message ?? 'no node fits'}` };
  }
  return undefined;
}

function componentHealth(
  rs: RecognitionService,
  component: Component,
  dep: ObservedDeployment | undefined,
  pods: ObservedPod[],
  now: Date,
  clusterDomain?: string,
): ComponentHealth {
  const name = childName(rs, component);
  const s = dep?.status ?? {};
  const min = rs.spec[component].replicas?.min ?? 1;
  const desired = Math.max(dep?.spec?.replicas ?? min, min);
  const ready = s.readyReplicas ?? 0;
  const status: ComponentStatus = {
    deployment: name,
    replicas: desired,
    readyReplicas: ready,
    updatedReplicas: s.updatedReplicas ?? 0,
    availableReplicas: s.availableReplicas ?? 0,
    summary: `${ready}/${desired}`,
    // Sorted, as the API server formats a Deployment's: the string never changes by itself, so neither does the status.
    selector: Object.entries(selectorLabels(rs, component)).map(([k, v]) => `${k}=${v}`).sort().join(','),
    endpoint: component === 'api' ? apiUrl(rs) : tritonGrpcTarget(rs, clusterDomain),
  };
  let failure: ComponentHealth['failure'];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    failure = podFailure(component, pod, now);
    if (failure) break;
  }
  const depConds = s.conditions ?? [];
  const deadline = depConds.find((c) => c.type === 'Progressing' && c.status === 'False');
  const replicaFailure = depConds.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  if (!failure && deadline) failure = { reason: deadline.reason ?? 'ProgressDeadlineExceeded', message: `deployment ${name}: ${deadline.message ?? 'rollout stalled'}` };
  if (!failure && replicaFailure) failure = { reason: replicaFailure.reason ?? 'ReplicaFailure', message: `deployment ${name}: ${replicaFailure.message ?? 'cannot create pods'}` };

  const generationSeen = dep !== undefined && (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
  const oldPods = (s.replicas ?? 0) > (s.updatedReplicas ?? 0);
  const rolledOut = generationSeen && (s.updatedReplicas ?? 0) >= desired && !oldPods;
  const available = (s.availableReplicas ?? 0) >= desired && ready >= desired;
  // Available pods of the current template, at the least: every old pod might be among the available.
  const currentAvailable = Math.max(0, (s.availableReplicas ?? 0) - ((s.replicas ?? 0) - (s.updatedReplicas ?? 0)));
  const enough = generationSeen && currentAvailable >= min && Math.min(ready, s.updatedReplicas ?? 0) >= min && min > 0;
  let progressMessage = '';
  if (!dep) progressMessage = `deployment ${name} not created yet`;
  else if (!generationSeen) progressMessage = `deployment ${name}: new spec not yet observed`;
  else if (!rolledOut) progressMessage = `deployment ${name}: ${s.updatedReplicas ?? 0} of ${desired} replicas updated, ${s.availableReplicas ?? 0} available`;
  else if (!available) progressMessage = `deployment ${name}: ${s.availableReplicas ?? 0} of ${desired} replicas available (min ${min})`;
  return {
    status,
    ready: enough && !failure,
    progressing: !failure && (!rolledOut || !available),
    progressMessage,
    failure,
  };
}

/**
 * Whether the HPAs can read the metrics they scale on, from the ScalingActive condition the
 * HPA controller writes: False with FailedGetPodsMetric (no Prometheus Adapter rule serving
 * triton_queue_time_us, say), FailedGetResourceMetric (no metrics-server) and the like
 * means it cannot scale at all, while the Deployment looks healthy. Undefined when the
 * resource owns no HPA: there is nothing to report then.
 */
export function autoscalingCondition(autoscalers: Observed['autoscalers']): Omit<Condition, 'lastTransitionTime'> | undefined {
  const owned = (['api', 'triton'] as const).flatMap((c) => (autoscalers?.[c] ? [{ component: c, hpa: autoscalers[c] }] : []));
  if (owned.length === 0) return undefined;
  const active = owned.map(({ component, hpa }) => ({ component, hpa, c: hpa.status?.conditions?.find((x) => x.type === 'ScalingActive') }));
  const label = (o: (typeof active)[number]) => `HPA ${o.hpa.metadata.name} (${o.component})`;
  // ScalingDisabled (the Deployment scaled to zero) is no metric problem: reported as Unknown below.
  const failing = active.filter((o) => o.c?.status === 'False' && o.c.reason !== 'ScalingDisabled');
  if (failing.length > 0) {
    const message = failing.map((o) => `${label(o)}: ${o.c?.reason ?? 'ScalingActive False'}: ${o.c?.message ?? 'cannot read its metric'}`).join('; ');
    return condition('AutoscalingMetricsAvailable', 'False', failing[0].c?.reason ?? 'FailedGetMetric', message);
  }
  const waiting = active.filter((o) => o.c?.status !== 'True');
  if (waiting.length > 0) {
    const why = (o: (typeof active)[number]) =>
      o.c ? `${o.c.reason ?? `ScalingActive ${o.c.status}`}${o.c.message ? `: ${o.c.message}` : ''}` : 'no ScalingActive condition yet (is the HPA controller running?)';
    const message = waiting.map((o) => `${label(o)}: ${why(o)}`).join('; ');
    return condition('AutoscalingMetricsAvailable', 'Unknown', waiting[0].c?.reason ?? 'AwaitingAutoscaler', message);
  }
  return condition('AutoscalingMetricsAvailable', 'True', 'MetricsAvailable', `${active.map(label).join(', ')}: metrics read`);
}

/**
 * status.rollout without automatic analysis, from the spec the API pods are given: phase
 * Canary while spec.canary is set, even at weight 0 (Triton loads a canary of another model
 * all the same; the API sends it nothing), Stable otherwise. With spec.canary.analysis the
 * operator's analysis decides it (analysis/progress.ts).
 */
export function rolloutStatus(rs: RecognitionService): RolloutStatus {
  const canary = canaryModel(rs);
  const stable = stableModel(rs);
  if (!canary) return { phase: 'Stable', stable, canaryWeight: 0 };
  return { phase: 'Canary', stable, canary: { name: canary.name, version: canary.version }, canaryWeight: canary.weight };
}

function condition(type: ConditionType, status: ConditionStatus, reason: string, message: string): Omit<Condition, 'lastTransitionTime'> {
  return { type, status, reason, message };
}

/** Keeps lastTransitionTime when a condition's status did not change (the Kubernetes convention). */
function withTransitions(previous: Condition[] | undefined, next: Array<Omit<Condition, 'lastTransitionTime'>>, generation: number | undefined, now: string): Condition[] {
  return next.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = before && before.status === c.status ? before.lastTransitionTime : now;
    return { ...c, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  });
}

export function computeStatus(rs: RecognitionService, observed: Observed, now: Date): RecognitionServiceStatus {
  const previous = rs.status;
  const generation = rs.metadata.generation;
  const api = componentHealth(rs, 'api', observed.api, observed.pods.api, now, observed.clusterDomain);
  const triton = componentHealth(rs, 'triton', observed.triton, observed.pods.triton, now, observed.clusterDomain);

  const componentCondition = (type: ConditionType, h: ComponentHealth, label: string) =>
    h.failure
      ? condition(type, 'False', h.failure.reason, h.failure.message)
      : h.ready
        ? condition(type, 'True', 'Available', `${label}: ${h.status.summary} replicas ready`)
        : condition(type, 'False', 'Progressing', h.progressMessage);
  const progressingWhileReady = [api, triton].filter((h) => h.ready && h.progressing).map((h) => h.progressMessage);

  const failures: FailureRecord[] = [];
  const iso = now.toISOString();
  if (observed.reconcileError) {
    failures.push({ component: 'operator', reason: observed.reconcileReason ?? 'ReconcileError', message: observed.reconcileError, time: iso });
  }
  if (api.failure) failures.push({ component: 'api', ...api.failure, time: iso });
  if (triton.failure) failures.push({ component: 'triton', ...triton.failure, time: iso });

  const degraded = failures[0];
  const allReady = api.ready && triton.ready && !degraded;
  const progressing = !degraded && (api.progressing || triton.progressing);
  const waiting = [api, triton].filter((h) => !h.ready).map((h) => h.progressMessage || h.failure?.message).filter(Boolean).join('; ');

  const conditions = withTransitions(
    previous?.conditions,
    [
      componentCondition('ApiReady', api, 'API'),
      componentCondition('TritonReady', triton, 'Triton'),
      allReady
        ? condition('Ready', 'True', 'Available', 'API and Triton are ready')
        : condition('Ready', 'False', degraded ? degraded.reason : 'Progressing', degraded ? degraded.message : waiting),
      progressing
        ? condition('Progressing', 'True', 'RollingOut', [waiting, ...progressingWhileReady].filter(Boolean).join('; '))
        : condition('Progressing', 'False', degraded ? 'Stalled' : 'Complete', degraded ? degraded.message : 'rollout complete'),
      degraded
        ? condition('Degraded', 'True', degraded.reason, degraded.message)
        : condition('Degraded', 'False', 'AsExpected', 'no failures seen'),
      ...[autoscalingCondition(observed.autoscalers)].filter((c) => c !== undefined),
    ],
    generation,
    iso,
  );

  // The last failure stays after recovery; a failure already on record keeps its first time.
  let lastFailure = previous?.lastFailure;
  if (degraded) {
    const same = lastFailure && lastFailure.reason === degraded.reason && lastFailure.component === degraded.component && lastFailure.message === degraded.message;
    lastFailure = same ? lastFailure : degraded;
  }

  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    url: apiUrl(rs),
    rollout: observed.rollout ?? rolloutStatus(rs),
    api: api.status,
    triton: triton.status,
    conditions,
    ...(lastFailure ? { lastFailure } : {}),
  };
}

/** Deep equality on JSON values, key order ignored: status is written only when this is false. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
