/**
 * Reconciles one RecognitionService: applies its desired children (server-side apply),
 * deletes the optional ones switched off, and writes the status when it changed.
 * Level-based and idempotent: it reads the resource and the pods fresh from the caches
 * each time, so any event (or none, on resync) leads to the same result.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { RecognitionService } from '../api/types.js';
import { desiredState, childName, INSTANCE_LABEL, COMPONENT_LABEL, type ChildRef, type Component } from '../desired/index.js';
import { describeError, type KubeClient } from '../kube.js';
import { signingSecret } from '../desired/api.js';
import { withDefaults } from '../api/defaults.js';
import { randomBytes } from 'node:crypto';
import { computeStatus, sameJson, type ObservedDeployment, type ObservedPod } from '../status.js';

export interface ReconcileCaches {
  getResource(namespace: string, name: string): RecognitionService | undefined;
  listPods(namespace: string): ObservedPod[];
  getDeployment(namespace: string, name: string): ObservedDeployment | undefined;
  /** Whether a child is in a cache; undefined when no informer watches that kind. */
  childExists?(ref: ChildRef): boolean | undefined;
}

export interface ReconcileResult {
  /** Children applied this time. */
  applied: number;
  deleted: number;
  statusWritten: boolean;
}

export class ReconcileError extends Error {
  override readonly name = 'ReconcileError';
  constructor(message: string, readonly reason: string) {
    super(message);
  }
}

export class RecognitionServiceReconciler {
  constructor(
    private readonly kube: KubeClient,
    private readonly caches: ReconcileCaches,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = key.split('/');
    const rs = this.caches.getResource(namespace, name);
    // Gone or going: owner references let the garbage collector remove the children.
    if (!rs || rs.metadata.deletionTimestamp) return { applied: 0, deleted: 0, statusWritten: false };

    const caps = await this.kube.capabilities();
    const desired = desiredState(rs, caps);
    const deployments: Partial<Record<Component, ObservedDeployment>> = {};
    let applied = 0;
    let deleted = 0;
    let failure: { message: string; reason: string } | undefined;
    try {
      // Before the Deployment that reads it; created once, so the key (and every link) stays.
      const secret = signingSecret(withDefaults(rs), randomBytes(32).toString('base64url'));
      if (secret && (await this.kube.createIfAbsent(secret))) applied++;
      for (const obj of desired.apply) {
        const result = await this.kube.apply<KubernetesObject & ObservedDeployment>(obj);
        applied++;
        if (obj.kind === 'Deployment') {
          const component = obj.metadata.labels?.[COMPONENT_LABEL] as Component;
          deployments[component] = result;
        }
      }
      for (const ref of desired.remove) {
        // Skip the DELETE when the cache says it is already gone (most reconciles).
        if (this.caches.childExists?.(ref) === false) continue;
        if (await this.kube.deleteIfExists(ref)) deleted++;
      }
    } catch (err) {
      const status = (err as { code?: number }).code;
      failure = { message: describeError(err), reason: typeof status === 'number' ? String(status) : (err as Error).name ?? 'Error' };
    }

    for (const c of ['api', 'triton'] as const) {
      deployments[c] ??= this.caches.getDeployment(namespace, childName(rs, c));
    }
    const pods = this.caches.listPods(namespace).filter((p) => p.metadata.labels?.[INSTANCE_LABEL] === name);
    const byComponent = (c: Component) => pods.filter((p) => p.metadata.labels?.[COMPONENT_LABEL] === c);
    const status = computeStatus(
      rs,
      { api: deployments.api, triton: deployments.triton, pods: { api: byComponent('api'), triton: byComponent('triton') }, reconcileError: failure?.message },
      this.now(),
    );
    let statusWritten = false;
    if (!sameJson(status, rs.status ?? {})) {
      await this.kube.writeStatus(rs, status);
      statusWritten = true;
    }
    if (failure) throw new ReconcileError(failure.message, failure.reason);
    return { applied, deleted, statusWritten };
  }
}
