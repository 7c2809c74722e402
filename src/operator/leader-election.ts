/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection:
 * the holder renews every retryPeriod; others take over once the record has not changed
 * for leaseDuration *as measured on their own clock* (no trust in other hosts' clocks);
 * writes use the Lease's resourceVersion, so two candidates can never both win. A leader
 * that cannot renew within renewDeadline steps down. On a graceful stop the leader
 * releases the Lease so a successor starts at once instead of waiting for expiry.
 */
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { observed, type RequestObserver } from './kube.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  onError?: (err: unknown) => void;
  /** Sees every Lease request (rest_client_requests_total). */
  observer?: RequestObserver;
}

export const DEFAULT_LEASE_TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private observedRecord = '';
  private observedAt = 0;
  private lastRenew = 0;
  private loop: Promise<void> | undefined;

  constructor(kc: KubeConfig, private readonly opts: LeaderElectionOptions) {
    this.api = kc.makeApiClient(CoordinationV1Api);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.loop = this.tick().finally(() => this.schedule(this.opts.retryPeriodMs));
    }, delay);
  }

  private async tick(): Promise<void> {
    let ok = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A call that hangs (a partitioned API server) must not stall the renew deadline.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`lease call took longer than ${this.opts.renewDeadlineMs} ms`)), this.opts.renewDeadlineMs);
      });
      ok = await Promise.race([this.tryAcquireOrRenew(), timeout]);
    } catch (err) {
      this.opts.onError?.(err);
    } finally {
      clearTimeout(timer);
    }
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading && !this.stopped) {
        this.leading = true;
        this.opts.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenew > this.opts.renewDeadlineMs) {
      this.leading = false;
      this.opts.onStoppedLeading();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const leaseSeconds = Math.ceil(this.opts.leaseDurationMs / 1000);
    const now = new V1MicroTime(Date.now());
    let lease: V1Lease;
    try {
      lease = await observed(this.opts.observer, 'GET', () => this.api.readNamespacedLease({ name, namespace }));
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
      await observed(this.opts.observer, 'POST', () => this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        },
      }));
      this.observe(`${identity}/${now.toISOString()}`);
      return true;
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}/${spec.renewTime ? new Date(spec.renewTime).toISOString() : ''}`;
    if (record !== this.observedRecord) this.observe(record);
    const holder = spec.holderIdentity ?? '';
    const held = holder !== '' && holder !== identity;
    if (held && Date.now() - this.observedAt < (spec.leaseDurationSeconds ?? leaseSeconds) * 1000) return false;

    const transitions = (spec.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
    try {
      await observed(this.opts.observer, 'PUT', () => this.api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: { name, namespace, resourceVersion: lease.metadata?.resourceVersion },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: leaseSeconds,
            acquireTime: holder === identity && spec.acquireTime ? new V1MicroTime(new Date(spec.acquireTime).getTime()) : now,
            renewTime: now,
            leaseTransitions: transitions,
          },
        },
      }));
    } catch (err) {
      if (statusCode(err) === 409) return false; // someone else wrote first
      throw err;
    }
    this.observe(`${identity}/${now.toISOString()}`);
    return true;
  }

  private observe(record: string): void {
    this.observedRecord = record;
    this.observedAt = Date.now();
  }

  /** Stops campaigning; a leader hands the Lease back so a successor need not wait for expiry. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loop?.catch(() => undefined);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.api.readNamespacedLease({ name: this.opts.name, namespace: this.opts.namespace });
      if (lease.spec?.holderIdentity === this.opts.identity) {
        await this.api.replaceNamespacedLease({
          name: this.opts.name,
          namespace: this.opts.namespace,
          body: {
            metadata: { name: this.opts.name, namespace: this.opts.namespace, resourceVersion: lease.metadata?.resourceVersion },
            spec: {
              holderIdentity: '',
              leaseDurationSeconds: 1,
              leaseTransitions: lease.spec.leaseTransitions ?? 0,
              ...(lease.spec.acquireTime ? { acquireTime: new V1MicroTime(new Date(lease.spec.acquireTime).getTime()) } : {}),
              renewTime: new V1MicroTime(Date.now()),
            },
          },
        });
      }
    } catch (err) {
      this.opts.onError?.(err);
    }
    this.opts.onStoppedLeading();
  }
}
