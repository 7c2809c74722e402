/**
 * Reconciles one RecognitionService: applies its desired children (server-side apply),
 * deletes the optional ones switched off, and writes the status when it changed.
 * Level-based and idempotent: it reads the resource, children, the signing-key Secret and
 * pods fresh from the caches each time, so any event (or none, on resync) leads to the same
 * result. It keeps nothing in memory between reconciles (controller-runtime's rule: what
 * the cluster can tell, ask it): what it must remember, it writes on the children (the
 * desired hash, the fields left to other managers), so a restarted operator, or the next
 * leader, finds the same answers and writes nothing.
 *
 * Quiet: a child whose live object already carries what the operator applies (same
 * desired-hash annotation, every applied field equal) is not written, so a child's status
 * change costs no write. Careful: an object with a child's name that this resource does
 * not control is never touched (controller-runtime's CreateOrUpdate / Helm's ownership
 * rule); the resource reports it instead. Applies go without `force`: a field another
 * field manager holds is taken back only if the operator must own it (field-conflicts.ts),
 * else left to that manager and reported as Degraded FieldConflict.
 */
import crypto from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { withDefaults } from '../api/defaults.js';
import { signingSecret } from '../desired/api.js';
import { KIND, type RecognitionService } from '../api/types.js';
import {
  desiredState,
  childName,
  FIELD_MANAGER,
  INSTANCE_LABEL,
  COMPONENT_LABEL,
  TRITON_HTTP_PORT,
  type ChildRef,
  type OperatorPeer,
  type Component,
  type KubeObject,
} from '../desired/index.js';
import type { EventRecorder } from '../events.js';
import { describeError, HANDOVER_MANAGER, statusCode, type KubeClient } from '../kube.js';
import { applyConflicts, describeConflicts, mustOwn, parseFieldPath, recordLeftTo, standingConflicts, withoutFields, type FieldConflict } from '../field-conflicts.js';
import { hasAutoscaler } from '../desired/policies.js';
import { computeStatus, sameJson, type ObservedAutoscaler, type ObservedDeployment, type ObservedPod } from '../status.js';
import { afterCheck, checkDueIn, rolloutBefore, windowOf } from '../analysis/progress.js';
import { readFigures } from '../analysis/prometheus.js';
import { stableModel, type ModelRef } from '../desired/rollout.js';
import { askedVersions, gatesReadiness, liveStable, managesTriton, servedVersions, versionsToLoad, VERSIONS_LOADED_CONDITION } from '../desired/versions.js';
import { loadVersions, readyVersions } from '../triton-repository.js';
import type { RolloutStatus } from '../api/types.js';

export const DESIRED_HASH_ANNOTATION = 'cv.recognition.io/desired-hash';

/** A reconcile that found its cache behind the last rollout step runs again this soon. */
const STALE_RETRY_MS = 500;

export interface ReconcileCaches {
  getResource(namespace: string, name: string): RecognitionService | undefined;
  listPods(namespace: string): ObservedPod[];
  getDeployment(namespace: string, name: string): ObservedDeployment | undefined;
  /** A child from the informer caches; undefined when not cached (or no informer watches that kind). */
  getChild?(ref: ChildRef): KubernetesObject | undefined;
  /** Whether a child is in a cache; undefined when no informer watches that kind. */
  childExists?(ref: ChildRef): boolean | undefined;
}

export interface ReconcileResult {
  /** Children applied (written) this time. */
  applied: number;
  deleted: number;
  statusWritten: boolean;
  /** Reconcile again after this long: a canary's next check is due then. */
  requeueAfterMs?: number;
}

export interface ReconcilerOptions {
  clusterDomain?: string;
  events?: EventRecorder;
  now?: () => Date;
  /** Prometheus's base URL, where a canary's automatic analysis reads the API's metrics. */
  prometheusUrl?: string;
  /** The operator's own pods, let through Triton's NetworkPolicy to load model versions. */
  operatorPeer?: OperatorPeer;
}

export class ReconcileError extends Error {
  override readonly name = 'ReconcileError';
  constructor(message: string, readonly reason: string) {
    super(message);
  }
}

type Live = KubernetesObject & {
  spec?: { replicas?: number };
  metadata?: { managedFields?: Array<{ manager?: string; operation?: string; subresource?: string; fieldsV1?: unknown }> };
};

/** A failure of one reconcile; `retry: false` waits for a change instead of a backoff retry. */
interface Failure {
  message: string;
  reason: string;
  retry?: boolean;
}

function refOf(obj: KubeObject): ChildRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
}

function describeRef(ref: ChildRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

function conflictMessage(ref: ChildRef, leftTo: FieldConflict[]): string {
  return `${describeRef(ref)}: ${describeConflicts(leftTo)} differs from the spec; left to that manager, not forced (drop the field from its config, or change the spec to match)`;
}

/** Failures all of one of these kinds give the Degraded condition that reason; others, ReconcileError. */
const STATUS_REASONS = new Set(['FieldConflict', 'TritonLoadFailed']);

function statusReason(failures: Failure[]): string | undefined {
  const reason = failures[0]?.reason;
  return reason !== undefined && STATUS_REASONS.has(reason) && failures.every((f) => f.reason === reason) ? reason : undefined;
}

/**
 * A Triton pod's readiness gate, from what Triton says is ready there: True once the spec's
 * stable version is. A pod that was never ready waits for it (it started with
 * config.pbtxt's versions). A ready pod stays ready while it has the version the running API
 * pods ask for (`live`): a new stable version, or model, that fails to load everywhere must
 * not take every pod out of the Service while the API pods still ask for the old one (they
 * are not given the new one until it loads). It leaves once it has neither.
 */
export function gateOf(pod: ObservedPod, stable: ModelRef, ready: ReadonlyMap<string, readonly string[]>, live?: ModelRef): { status: 'True' | 'False'; reason: string; message: string } {
  const has = (m: ModelRef) => (ready.get(m.name) ?? []).includes(m.version);
  if (has(stable)) return { status: 'True', reason: 'VersionsLoaded', message: `${stable.name} version ${stable.version} is loaded` };
  const loaded = ready.get(stable.name)?.length ? `loaded: ${ready.get(stable.name)!.join(', ')}` : `no version of ${stable.name} loaded`;
  if (condition(pod, VERSIONS_LOADED_CONDITION) === 'True' && live && live.version !== '' && has(live)) {
    return { status: 'True', reason: 'PreviousVersionLoaded', message: `${stable.name} version ${stable.version} is not loaded yet; ${live.name} version ${live.version}, which the API pods ask for, is` };
  }
  return { status: 'False', reason: 'StableVersionNotLoaded', message: `${stable.name} version ${stable.version} is not loaded (${loaded})` };
}

function condition(pod: ObservedPod, type: string): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === type)?.status;
}

function formatHost(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

/**
 * Whether every API pod runs the settings the operator applies now: the live Deployment
 * carries the desired hash, its controller has seen it, every replica is of the new template,
 * and no pod is still draining. Until then, a version the spec dropped may still be asked for.
 */
export function apiSettled(dep: ObservedDeployment | undefined, hash: string, apiPods: ObservedPod[]): boolean {
  if (!dep || dep.metadata.annotations?.[DESIRED_HASH_ANNOTATION] !== hash) return false;
  const s = dep.status ?? {};
  const replicas = dep.spec?.replicas ?? 1;
  const generationSeen = (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
  return generationSeen && (s.updatedReplicas ?? 0) >= replicas && (s.replicas ?? 0) === (s.updatedReplicas ?? 0) && apiPods.every((p) => !p.metadata.deletionTimestamp);
}

/** Whether this RecognitionService (by uid) is the object's controller. */
export function controlledBy(obj: KubernetesObject, rs: RecognitionService): boolean {
  const owner = obj.metadata?.ownerReferences?.find((o) => o.controller);
  return owner !== undefined && owner.kind === KIND && owner.uid === rs.metadata.uid;
}

/** A short hash of what the operator applies, stamped on the child to tell a spec change from drift. */
export function desiredHash(obj: KubeObject): string {
  return crypto.createHash('sha256').update(JSON.stringify(obj)).digest('hex').slice(0, 16);
}

/**
 * Every field of `want` is in `live` with an equal value (lists element by element, same
 * length). client-node's model objects rename a few members (`from` → `_from`), hence the
 * second lookup. A false negative only costs an apply that changes nothing.
 */
export function contains(live: unknown, want: unknown): boolean {
  if (want === null || typeof want !== 'object') {
    if (typeof want === 'number' && typeof live === 'string') return String(want) === live;
    // The API server writes quantities canonically ("20000" comes back as "20k").
    if (typeof want === 'string' && typeof live === 'string' && live !== want) {
      const a = quantity(want);
      return a !== undefined && a === quantity(live);
    }
    return live === want;
  }
  if (Array.isArray(want)) {
    return Array.isArray(live) && live.length === want.length && want.every((w, i) => contains(live[i], w));
  }
  if (live === null || typeof live !== 'object' || Array.isArray(live)) return false;
  const l = live as Record<string, unknown>;
  return Object.entries(want as Record<string, unknown>).every(([k, v]) => v === undefined || contains(k in l ? l[k] : l[`_${k}`], v));
}

const QUANTITY_SUFFIX: Record<string, number> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** The value of a Kubernetes resource quantity ("500m", "1Gi", "20k", "1e3"), or undefined. */
export function quantity(s: string): number | undefined {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(s);
  if (!m) return undefined;
  const base = Number(m[1]) * (m[2] ? 10 ** Number(m[2].slice(1)) : QUANTITY_SUFFIX[m[3] ?? '']);
  return Number.isFinite(base) ? base : undefined;
}

/** Whether the operator's own field manager holds spec.replicas (set while no HPA existed). */
function ownsReplicas(live: Live): boolean {
  return (live.metadata?.managedFields ?? []).some((m) => {
    if (m.manager !== FIELD_MANAGER || m.operation !== 'Apply') return false;
    const spec = (m.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:spec'];
    return spec !== undefined && 'f:replicas' in spec;
  });
}

export class RecognitionServiceReconciler {
  private readonly now: () => Date;

  constructor(
    private readonly kube: KubeClient,
    private readonly caches: ReconcileCaches,
    private readonly opts: ReconcilerOptions = {},
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = key.split('/');
    const rs = this.caches.getResource(namespace, name);
    // Gone or going: owner references let the garbage collector remove the children.
    if (!rs || rs.metadata.deletionTimestamp) {
      return { applied: 0, deleted: 0, statusWritten: false };
    }

    // First the rollout: a check may change the weight the API pods are given below.
    const progress = await this.progressRollout(rs);
    // The cache had not yet seen the last step: nothing applied, again once it has (its watch
    // event queues the key too).
    if (progress === 'stale') return { applied: 0, deleted: 0, statusWritten: false, requeueAfterMs: STALE_RETRY_MS };
    const { rollout, requeueAfterMs } = progress;
    const current: RecognitionService = { ...rs, status: { ...rs.status, rollout } };
    const caps = await this.kube.capabilities();
    const deployments: Partial<Record<Component, ObservedDeployment>> = {};
    const autoscalers: Partial<Record<Component, ObservedAutoscaler>> = {};
    let applied = 0;
    let deleted = 0;
    const failures: Failure[] = [];
    try {
      // Before the Deployment that reads it, whose pod template names the Secret's uid.
      const signing = await this.signingKey(rs);
      if (signing.created) applied++;
      const desired = desiredState(current, caps, { clusterDomain: this.opts.clusterDomain, signingSecretUid: signing.uid, operatorPeer: this.opts.operatorPeer });
      const lookups = this.lookUpUncached(desired.apply);
      for (const obj of desired.apply) {
        const api = obj.kind === 'Deployment' && obj.metadata.labels?.[COMPONENT_LABEL] === 'api';
        // Triton's pods load the versions the API pods are about to ask for first; where one
        // cannot, the API pods keep the settings they have (reported, retried).
        if (api && !(await this.loadTritonVersions(current, obj, failures))) continue;
        const result = await this.applyChild(rs, obj, failures, lookups.get(obj));
        if (result.written) applied++;
        if (obj.kind === 'Deployment' && result.live) {
          deployments[obj.metadata.labels?.[COMPONENT_LABEL] as Component] = result.live as ObservedDeployment;
        }
        if (obj.kind === 'HorizontalPodAutoscaler' && result.live) {
          autoscalers[obj.metadata.labels?.[COMPONENT_LABEL] as Component] = result.live as ObservedAutoscaler;
        }
      }
      for (const ref of desired.remove) if (await this.removeChild(rs, ref)) deleted++;
    } catch (err) {
      const status = (err as { code?: number }).code;
      failures.push({ message: describeError(err), reason: typeof status === 'number' ? String(status) : ((err as Error).name ?? 'Error') });
    }

    for (const c of ['api', 'triton'] as const) {
      deployments[c] ??= this.caches.getDeployment(namespace, childName(rs, c));
      // Its HPA's ScalingActive condition (the HPA controller writes it): only an HPA the spec
      // asks for and this resource controls, never a leftover or someone else's.
      if (!autoscalers[c] && hasAutoscaler(withDefaults(rs), c)) {
        const hpa = this.caches.getChild?.({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace, name: childName(rs, c) });
        if (hpa && controlledBy(hpa, rs)) autoscalers[c] = hpa as unknown as ObservedAutoscaler;
      }
    }
    const now = this.now();
    const byComponent = (c: Component) => this.podsOf(rs, c).filter((p) => !p.metadata.deletionTimestamp);
    const status = computeStatus(
      rs,
      {
        api: deployments.api,
        triton: deployments.triton,
        pods: { api: byComponent('api'), triton: byComponent('triton') },
        reconcileError: failures.length > 0 ? failures.map((f) => f.message).join('; ') : undefined,
        reconcileReason: statusReason(failures),
        clusterDomain: this.opts.clusterDomain,
        autoscalers,
        rollout,
      },
      now,
    );
    let statusWritten = false;
    if (!sameJson(status, rs.status ?? {})) {
      statusWritten = await this.kube.writeStatus(rs, status);
      if (statusWritten) this.recordTransitions(rs, status);
    }
    // A field conflict is reported, not retried: the child's or the resource's next change re-runs it.
    const retried = failures.filter((f) => f.retry !== false);
    if (retried.length > 0) throw new ReconcileError(retried.map((f) => f.message).join('; '), retried[0].reason);
    return { applied, deleted, statusWritten, ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}) };
  }

  /**
   * The canary's rollout (analysis/progress.ts): under automatic analysis, a check when one is
   * due (its figures from Prometheus) and the events it decided; the time to the next check.
   *
   * A step (a start, a check) is written at once and only onto the resource as it was read: a
   * reconcile working from a cache that has not yet seen the last step's status would check
   * again and apply the older weight; its write fails with a conflict instead, before any child
   * is applied ('stale'), and it runs again from a fresh cache. Events follow the write, once
   * per step.
   */
  private async progressRollout(rs: RecognitionService): Promise<{ rollout: RolloutStatus; requeueAfterMs?: number } | 'stale'> {
    const now = this.now();
    const defaulted = withDefaults(rs);
    let step = rolloutBefore(defaulted, now);
    const events = [...step.events];
    const policy = defaulted.spec.canary?.analysis;
    let due = policy ? checkDueIn(step.status, policy, now) : undefined;
    let stepped = step.events.length > 0;
    if (policy && due !== undefined && due <= 0) {
      stepped = true;
      const { stable, canary } = step.status;
      const url = this.opts.prometheusUrl;
      const result = url
        ? await readFigures(url, { namespace: rs.metadata.namespace, service: childName(rs, 'api'), stable, canary: canary!, windowSeconds: windowOf(policy) }, now).then(
            (figures) => ({ figures }),
            (err: unknown) => ({ error: (err as Error).message }),
          )
        : { error: 'the operator has no Prometheus address (--prometheus-url, the chart value analysis.prometheusUrl)' };
      step = afterCheck(step.status, policy, result, now);
      events.push(...step.events);
      due = checkDueIn(step.status, policy, now);
    }
    if (stepped) {
      try {
        // false: the resource is gone, and with it what the events would be about.
        if (!(await this.kube.writeStatus(rs, { ...rs.status, rollout: step.status }, { ifUnchanged: true }))) events.length = 0;
      } catch (err) {
        if (statusCode(err) === 409) return 'stale';
        throw err;
      }
    }
    for (const e of events) this.opts.events?.record(rs, e.type, e.reason, 'Rollout', e.message);
    return { rollout: step.status, ...(due !== undefined ? { requeueAfterMs: Math.max(due, 0) } : {}) };
  }

  /**
   * Keeps the spec's versions loaded on every Triton pod whose container is ready
   * (desired/versions.ts): added at once, dropped only once every API pod runs the settings of
   * `apiDeployment` (an old pod may ask for a version the spec just dropped). Then each pod's
   * readiness gate (gateOf). Pods are handled in parallel; a failure is reported on the
   * resource and retried, the other pods go on. False: a pod Triton answered for lacks a
   * version the API pods are to ask for (askedVersions), so they are not given it yet. A pod
   * that does not answer holds nothing back: a rollback must never wait for it.
   */
  private async loadTritonVersions(rs: RecognitionService, apiDeployment: KubeObject, failures: Failure[]): Promise<boolean> {
    const defaulted = withDefaults(rs);
    if (!managesTriton(defaulted)) return true;
    const served = servedVersions(defaulted);
    const asked = askedVersions(defaulted);
    const { namespace } = rs.metadata;
    const live = this.caches.getDeployment(namespace, childName(rs, 'api'));
    const settled = apiSettled(live, desiredHash(apiDeployment), this.podsOf(rs, 'api'));
    const stable = stableModel(defaulted);
    const gated = gatesReadiness(defaulted);
    const timeoutMs = defaulted.spec.triton.startupTimeoutSeconds * 1000;
    // Only pods Triton's Deployment runs on the pod network: never a hostNetwork pod, whose
    // address is its node's, and always Triton's own port, whatever a pod declares.
    const reachable = this.podsOf(rs, 'triton').filter((p) => !p.metadata.deletionTimestamp && !p.spec?.hostNetwork && p.status?.podIP && condition(p, 'ContainersReady') === 'True');
    const ok = await Promise.all(
      reachable.map(async (pod) => {
        const base = `http://${formatHost(pod.status!.podIP!)}:${TRITON_HTTP_PORT}`;
        const problems: string[] = [];
        // What Triton says is ready there; unknown when it does not answer.
        let ready: Map<string, string[]> | undefined;
        const read = async () => {
          try {
            ready = await readyVersions(base);
          } catch (err) {
            problems.push((err as Error).message);
          }
        };
        await read();
        for (const [model, versions] of served) {
          const had = ready?.get(model) ?? [];
          const load = ready && versionsToLoad(had, versions, settled);
          if (!load) continue;
          try {
            await loadVersions(base, model, load, timeoutMs);
          } catch (err) {
            problems.push((err as Error).message);
          }
          // Asked again: Triton answers 200 for a policy naming a version its repository lacks.
          await read();
          const missing = load.filter((v) => !(ready?.get(model) ?? []).includes(v));
          if (missing.length > 0) problems.push(`${model} version ${missing.join(', ')} not ready after loading (not in the model repository, or failed to load: Triton's log)`);
          else this.opts.events?.record(rs, 'Normal', 'TritonVersionsLoaded', 'Load', `Triton pod ${pod.metadata.name}: ${model} serves versions ${load.join(', ')} (had ${had.join(', ') || 'none'})`);
        }
        const lacking = ready ? [...asked].flatMap(([model, versions]) => versions.filter((v) => !(ready!.get(model) ?? []).includes(v)).map((v) => `${model} version ${v}`)) : [];
        try {
          if (gated && ready) await this.setVersionsGate(pod, namespace, gateOf(pod, stable, ready, liveStable(live)));
        } catch (err) {
          problems.push(`its readiness gate: ${describeError(err)}`);
        }
        if (problems.length > 0 || lacking.length > 0) {
          const held = lacking.length > 0 ? `; the API pods keep their settings until it has ${lacking.join(', ')}` : '';
          const message = `Triton pod ${pod.metadata.name}: ${[...new Set(problems)].join('; ') || 'not loaded'}${held}`;
          failures.push({ message, reason: 'TritonLoadFailed' });
          this.opts.events?.record(rs, 'Warning', 'TritonLoadFailed', 'Load', message);
        }
        return lacking.length === 0;
      }),
    );
    return ok.every(Boolean);
  }

  /** The resource's pods of one component, from the cache, terminating ones included. */
  private podsOf(rs: RecognitionService, component: Component): ObservedPod[] {
    return this.caches
      .listPods(rs.metadata.namespace)
      .filter((p) => p.metadata.labels?.[INSTANCE_LABEL] === rs.metadata.name && p.metadata.labels?.[COMPONENT_LABEL] === component);
  }

  /** The pod's readiness-gate condition, written when its status or message changes (the transition time kept while the status stays). */
  private async setVersionsGate(pod: ObservedPod, namespace: string, gate: { status: 'True' | 'False'; reason: string; message: string }): Promise<void> {
    const live = pod.status?.conditions?.find((c) => c.type === VERSIONS_LOADED_CONDITION);
    if (live?.status === gate.status && live.message === gate.message) return;
    const since = live?.status === gate.status ? live.lastTransitionTime : undefined;
    await this.kube.setPodCondition(namespace, pod.metadata.name, { type: VERSIONS_LOADED_CONDITION, ...gate }, since);
  }

  /**
   * The signing-key Secret the API pods read when the spec names none: looked up in the cache
   * (metadata only: the operator never sees the key), created with a new random key when
   * missing, never rewritten (that would invalidate every link handed out). Its uid goes on
   * the API's pod template, so a recreated Secret rolls the pods to the new key.
   */
  private async signingKey(rs: RecognitionService): Promise<{ uid?: string; created: boolean }> {
    const secret = signingSecret(withDefaults(rs), randomBytes(32).toString('base64url'));
    if (!secret) return { created: false };
    const ref = refOf(secret);
    const cached = this.caches.getChild?.(ref);
    if (cached?.metadata?.uid) return { uid: cached.metadata.uid, created: false };
    const made = await this.kube.createIfAbsent(secret);
    if (made?.metadata?.uid) {
      this.opts.events?.record(rs, 'Normal', 'Created', 'Create', `created ${describeRef(ref)}`);
      return { uid: made.metadata.uid, created: true };
    }
    // There, but not in the cache: the cache lags behind a create, or someone made it without the operator's label.
    const live = await this.kube.secretMetadata(ref);
    if (!live?.metadata?.uid) throw new ReconcileError(`${describeRef(ref)}: deleted while being created; retrying`, 'SigningSecretMissing');
    return { uid: live.metadata.uid, created: false };
  }

  /**
   * Children the caches do not hold (new ones, mostly) are read from the API server all at
   * once: a new resource's first reconcile waited for one GET per child in turn before.
   * A failed read fails that child's apply, not the others'.
   */
  private lookUpUncached(objs: KubeObject[]): Map<KubeObject, Promise<Live | undefined>> {
    const out = new Map<KubeObject, Promise<Live | undefined>>();
    for (const obj of objs) {
      const ref = refOf(obj);
      if (this.caches.getChild?.(ref)) continue;
      const read = this.kube.get<Live>(ref);
      read.catch(() => undefined); // awaited (and reported) in applyChild, or dropped when an earlier child failed
      out.set(obj, read);
    }
    return out;
  }

  /** Applies one child unless it is foreign or already as desired. */
  private async applyChild(
    rs: RecognitionService,
    desiredObj: KubeObject,
    failures: Failure[],
    lookup?: Promise<Live | undefined>,
  ): Promise<{ written: boolean; live?: Live }> {
    const ref = refOf(desiredObj);
    const hash = desiredHash(desiredObj);
    const obj: KubeObject = {
      ...desiredObj,
      metadata: { ...desiredObj.metadata, annotations: { ...(desiredObj.metadata.annotations ?? {}), [DESIRED_HASH_ANNOTATION]: hash } },
    };
    // The caches hold only objects labelled as ours; anything else must be looked up.
    const live: Live | undefined = this.caches.getChild?.(ref) ?? (await (lookup ?? this.kube.get<Live>(ref)));
    if (live && !controlledBy(live, rs)) {
      const owner = live.metadata?.ownerReferences?.find((o) => o.controller);
      const message = `${describeRef(ref)} exists and is not controlled by this RecognitionService${owner ? ` (controller: ${owner.kind} ${owner.name})` : ''}: not adopted; delete or rename it`;
      failures.push({ message, reason: 'OwnershipConflict' });
      this.opts.events?.record(rs, 'Warning', 'AdoptionRefused', 'Adopt', message);
      return { written: false };
    }
    if (live && live.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] === hash) {
      const comparable = (o: KubeObject) => ({ ...o, apiVersion: undefined, kind: undefined });
      if (contains(live, comparable(obj))) return { written: false, live };
      // Fields left to other managers (recorded on the child), each still theirs, the rest as applied: nothing to write.
      const standing = standingConflicts(live, obj);
      if (standing && contains(live, comparable(withoutFields(obj, standing.map((c) => c.field))))) {
        failures.push({ message: conflictMessage(ref, standing), reason: 'FieldConflict', retry: false });
        return { written: false, live };
      }
    }
    // Handing replicas to a new HPA: a second manager keeps the current count while the
    // operator's apply drops the field, so the Deployment is not reset to 1 replica.
    if (live && ref.kind === 'Deployment' && (obj.spec as { replicas?: number }).replicas === undefined && ownsReplicas(live)) {
      await this.kube.apply(
        { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: ref.name, namespace: ref.namespace }, spec: { replicas: live.spec?.replicas ?? 1 } },
        { manager: HANDOVER_MANAGER, force: true },
      );
    }
    const { result, leftTo, reclaimed } = await this.applyResolvingConflicts(ref, obj);
    this.opts.events?.record(
      rs,
      'Normal',
      live ? 'Updated' : 'Created',
      live ? 'Update' : 'Create',
      `${live ? 'updated' : 'created'} ${describeRef(ref)}`,
    );
    if (reclaimed.length > 0) {
      this.opts.events?.record(rs, 'Normal', 'FieldsReclaimed', 'Update', `${describeRef(ref)}: took back ${describeConflicts(reclaimed)}: fields the operator must own`);
    }
    if (leftTo.length > 0) {
      const message = conflictMessage(ref, leftTo);
      failures.push({ message, reason: 'FieldConflict', retry: false });
      this.opts.events?.record(rs, 'Warning', 'FieldConflict', 'Update', message);
    }
    return { written: true, live: result };
  }

  /**
   * Server-side apply without force. On a conflict, the fields the operator must own are
   * taken back (force), the others are dropped from the applied object so that their
   * manager keeps them; a few rounds cover a manager that changes fields meanwhile.
   */
  private async applyResolvingConflicts(
    ref: ChildRef,
    obj: KubeObject,
  ): Promise<{ result: Live; leftTo: FieldConflict[]; reclaimed: FieldConflict[] }> {
    let body = obj;
    let force = false;
    const leftTo: FieldConflict[] = [];
    const reclaimed: FieldConflict[] = [];
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.kube.apply<Live>(body, { force });
        return { result, leftTo, reclaimed };
      } catch (err) {
        const conflicts = applyConflicts(err);
        if (!conflicts || attempt >= 3) throw err;
        // The handover manager is the operator itself: its replicas are always taken back.
        const theirs = conflicts.filter((c) => c.manager !== HANDOVER_MANAGER && !mustOwn(ref.kind, c.field));
        const ours = conflicts.filter((c) => !theirs.includes(c));
        body = withoutFields(body, theirs.map((c) => c.field));
        // Force only ever covers must-own fields: a field that could not be dropped stops here.
        const stuck = theirs.filter((c) => parseFieldPath(c.field, body) !== undefined);
        if (stuck.length > 0) throw new ReconcileError(`${describeRef(ref)}: cannot leave ${describeConflicts(stuck)} to its manager`, 'FieldConflict');
        leftTo.push(...theirs.filter((c) => !leftTo.some((l) => l.field === c.field)));
        body = recordLeftTo(body, leftTo);
        reclaimed.push(...ours.filter((c) => c.manager !== HANDOVER_MANAGER));
        force = ours.length > 0;
      }
    }
  }

  /**
   * Deletes a switched-off child if it exists and is ours. A watched kind is read from its
   * cache (a miss: nothing of ours there); an unwatched one (a ServiceMonitor whose CRD came
   * after the operator started) from the API server.
   */
  private async removeChild(rs: RecognitionService, ref: ChildRef): Promise<boolean> {
    const cached = this.caches.childExists?.(ref);
    if (cached === false) return false;
    const live = this.caches.getChild?.(ref) ?? (await this.kube.get(ref));
    if (!live || !controlledBy(live, rs)) return false; // gone, or someone else's: never ours to delete
    const gone = await this.kube.deleteIfExists(ref, live.metadata?.uid);
    if (gone) this.opts.events?.record(rs, 'Normal', 'Deleted', 'Delete', `deleted ${describeRef(ref)} (switched off in the spec)`);
    return gone;
  }

  /** Events for what changed in the status: degraded (and why), ready again. */
  private recordTransitions(rs: RecognitionService, next: NonNullable<RecognitionService['status']>): void {
    const events = this.opts.events;
    if (!events) return;
    const cond = (s: RecognitionService['status'], type: string) => s?.conditions?.find((c) => c.type === type);
    const was = cond(rs.status, 'Degraded');
    const now = cond(next, 'Degraded');
    if (now?.status === 'True' && (was?.status !== 'True' || was.reason !== now.reason || was.message !== now.message)) {
      events.record(rs, 'Warning', now.reason, 'Reconcile', now.message);
    }
    // An HPA that cannot read its metric: the service runs, but will not scale.
    const wasScaling = cond(rs.status, 'AutoscalingMetricsAvailable');
    const scaling = cond(next, 'AutoscalingMetricsAvailable');
    if (scaling?.status === 'False' && (wasScaling?.status !== 'False' || wasScaling.reason !== scaling.reason)) {
      events.record(rs, 'Warning', 'AutoscalingMetricsUnavailable', 'Reconcile', scaling.message);
    }
    const wasReady = cond(rs.status, 'Ready')?.status === 'True';
    if (cond(next, 'Ready')?.status === 'True' && !wasReady) events.record(rs, 'Normal', 'Ready', 'Reconcile', 'API and Triton are ready');
  }
}
