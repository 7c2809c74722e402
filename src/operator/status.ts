/**
 * Status of a RecognitionService from what its children report: pure, given the clock.
 * Ready is never True while a pod of either component is crash-looping or cannot start,
 * whatever the Deployment's counters say (a crash-looping pod can be briefly "ready").
 */
import type {
  ComponentStatus,
  Condition,
  ConditionStatus,
  ConditionType,
  FailureRecord,
  RecognitionService,
  RecognitionServiceStatus,
} from './api/types.js';
import { apiUrl, childName, tritonGrpcTarget, type Component } from './desired/naming.js';

/** The parts of a Deployment the status reads. */
export interface ObservedDeployment {
  metadata: { name: string; generation?: number };
  spec?: { replicas?: number };
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
  state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
  lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string } };
}

/** The parts of a Pod the status reads. */
export interface ObservedPod {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: unknown };
  status?: { containerStatuses?: ObservedContainerStatus[]; initContainerStatuses?: ObservedContainerStatus[] };
}

export interface Observed {
  api?: ObservedDeployment;
  triton?: ObservedDeployment;
  pods: Record<Component, ObservedPod[]>;
  /** Error of the last apply, if it failed. */
  reconcileError?: string;
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

function componentHealth(rs: RecognitionService, component: Component, dep: ObservedDeployment | undefined, pods: ObservedPod[]): ComponentHealth {
  const name = childName(rs, component);
  const s = dep?.status ?? {};
  const desired = dep?.spec?.replicas ?? rs.spec[component].replicas?.min ?? 1;
  const ready = s.readyReplicas ?? 0;
  const status: ComponentStatus = {
    deployment: name,
    replicas: desired,
    readyReplicas: ready,
    updatedReplicas: s.updatedReplicas ?? 0,
    availableReplicas: s.availableReplicas ?? 0,
    summary: `${ready}/${desired}`,
    endpoint: component === 'api' ? apiUrl(rs) : tritonGrpcTarget(rs),
  };
  let failure: ComponentHealth['failure'];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      const reason = c.state?.waiting?.reason;
      if (reason && FAILING_REASONS.has(reason)) {
        const last = c.lastState?.terminated;
        const detail = last ? ` (last exit ${last.exitCode ?? '?'}${last.reason ? ` ${last.reason}` : ''})` : '';
        const hint = component === 'triton' && reason === 'CrashLoopBackOff' ? '; Triton exits when a model fails to load, see its log' : '';
        failure = {
          reason,
          message: `pod ${pod.metadata.name} container ${c.name}: ${reason}${detail}, ${c.restartCount ?? 0} restarts${hint}`,
        };
        break;
      }
    }
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
  const available = (s.availableReplicas ?? 0) >= desired && ready >= desired && desired > 0;
  let progressMessage = '';
  if (!dep) progressMessage = `deployment ${name} not created yet`;
  else if (!generationSeen) progressMessage = `deployment ${name}: new spec not yet observed`;
  else if (!rolledOut) progressMessage = `deployment ${name}: ${s.updatedReplicas ?? 0} of ${desired} replicas updated`;
  else if (!available) progressMessage = `deployment ${name}: ${ready} of ${desired} replicas ready`;
  return {
    status,
    ready: rolledOut && available && !failure,
    progressing: !failure && (!rolledOut || !available),
    progressMessage,
    failure,
  };
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
  const api = componentHealth(rs, 'api', observed.api, observed.pods.api);
  const triton = componentHealth(rs, 'triton', observed.triton, observed.pods.triton);

  const componentCondition = (type: ConditionType, h: ComponentHealth, label: string) =>
    h.failure
      ? condition(type, 'False', h.failure.reason, h.failure.message)
      : h.ready
        ? condition(type, 'True', 'Available', `${label}: ${h.status.summary} replicas ready`)
        : condition(type, 'False', 'Progressing', h.progressMessage);

  const failures: FailureRecord[] = [];
  const iso = now.toISOString();
  if (observed.reconcileError) failures.push({ component: 'operator', reason: 'ReconcileFailed', message: observed.reconcileError, time: iso });
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
        ? condition('Progressing', 'True', 'RollingOut', waiting)
        : condition('Progressing', 'False', degraded ? 'Stalled' : 'Complete', degraded ? degraded.message : 'rollout complete'),
      degraded
        ? condition('Degraded', 'True', degraded.reason, degraded.message)
        : condition('Degraded', 'False', 'AsExpected', 'no failures seen'),
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
