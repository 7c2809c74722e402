/**
 * The operator process: informers on RecognitionServices and on the children they own,
 * a work queue feeding a few workers (only while this instance leads), periodic resync,
 * leader election, probes and metrics, and a graceful stop.
 */
import os from 'node:os';
import {
  makeInformer,
  CoreV1Api,
  KubernetesObjectApi,
  setHeaderOptions,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { GROUP, KIND, PLURAL, VERSION, type RecognitionService } from './api/types.js';
import { RecognitionServiceReconciler, ReconcileError } from './controllers/recognitionservice-reconciler.js';
import { CHILD_KINDS, INSTANCE_LABEL, MANAGED_BY_SELECTOR, type OperatorPeer } from './desired/index.js';
import { startHealthServer, type HealthServer } from './health.js';
import { ReusingKubeConfig } from './connections.js';
import { KubeClient, describeError, observed, METADATA_LIST_ONLY, METADATA_ONLY } from './kube.js';
import { DEFAULT_LEASE_TIMING, LeaderElector } from './leader-election.js';
import { EventRecorder } from './events.js';
import { CONTROLLER, OperatorMetrics, type ConditionSource } from './metrics.js';
import { WorkQueue } from './queue.js';
import type { ObservedDeployment, ObservedPod } from './status.js';

export interface OperatorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  /** Namespace of the leader Lease (the operator's own namespace in a cluster). */
  leaseNamespace: string;
  leaseName?: string;
  identity?: string;
  workers?: number;
  resyncPeriodMs?: number;
  leaseTiming?: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  backoff?: { baseDelayMs: number; maxDelayMs: number };
  capabilitiesTtlMs?: number;
  /** Probe/metrics listener; port 0 picks a free one, undefined starts none. */
  health?: { host: string; port: number };
  metrics?: OperatorMetrics;
  logger?: OperatorLogger;
  /** The cluster's DNS domain for service addresses (default cluster.local). */
  clusterDomain?: string;
  /**
   * Namespaces to watch and manage (a namespaced install: the chart's watchNamespaces, with
   * a Role in each); undefined or empty: every namespace (the ClusterRole).
   */
  namespaces?: readonly string[];
  /** Write Kubernetes Events (events.k8s.io/v1) on the resources; on by default. */
  events?: boolean;
  /** Prometheus's base URL, where canaries under automatic analysis are measured; unset: no analysis can run. */
  prometheusUrl?: string;
  /** The operator's own pods, let through Triton's NetworkPolicy to load model versions. */
  operatorPeer?: OperatorPeer;
  /** Called when leadership is lost (not on stop()); the operator keeps campaigning. */
  onLostLeadership?: () => void;
}

const silentLogger: OperatorLogger = { info() {}, warn() {}, error() {} };

type AnyInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

/**
 * One cache over the informers of each watched namespace (or the one cluster-wide informer):
 * what the reconciler reads, whichever way the operator is installed.
 */
export class ScopedCache {
  constructor(private readonly byNamespace: ReadonlyMap<string | undefined, AnyInformer>) {}

  private of(namespace: string): AnyInformer | undefined {
    return this.byNamespace.get(undefined) ?? this.byNamespace.get(namespace);
  }

  get(name: string, namespace: string): KubernetesObject | undefined {
    return this.of(namespace)?.get(name, namespace);
  }

  /** The objects of one namespace, or of every watched one. */
  list(namespace?: string): KubernetesObject[] {
    if (namespace !== undefined) return [...(this.of(namespace)?.list(namespace) ?? [])];
    return [...this.byNamespace.values()].flatMap((inf) => [...inf.list()]);
  }
}

/** The watched namespaces of a namespaced install, deduplicated; undefined: every namespace. */
export function watchScopes(namespaces: readonly string[] | undefined): Array<string | undefined> {
  const unique = [...new Set((namespaces ?? []).map((ns) => ns.trim()).filter(Boolean))];
  return unique.length > 0 ? unique : [undefined];
}

export class RecognitionOperator {
  readonly metrics: OperatorMetrics;
  readonly identity: string;
  private readonly leaseName: string;
  private readonly kube: KubeClient;
  /** opts.kubeConfig, with one keep-alive connection pool for every API call (connections.ts). */
  private readonly kc: ReusingKubeConfig;
  private readonly log: OperatorLogger;
  private readonly informers: AnyInformer[] = [];
  private resources!: ScopedCache;
  private pods!: ScopedCache;
  private deployments!: ScopedCache;
  private readonly childInformers = new Map<string, ScopedCache>();
  private readonly elector: LeaderElector;
  private readonly reconciler: RecognitionServiceReconciler;
  private queue: WorkQueue | undefined;
  private workers: Promise<void>[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private health: HealthServer | undefined;
  private synced = false;
  private stopping = false;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  /** Informers whose last list or watch failed, with a count of their failures. */
  private readonly failing = new Map<AnyInformer, number>();

  constructor(private readonly opts: OperatorOptions) {
    this.metrics = opts.metrics ?? new OperatorMetrics();
    this.identity = opts.identity ?? `${os.hostname()}-${process.pid}`;
    this.log = opts.logger ?? silentLogger;
    const observer = (method: string, code: string) => this.metrics.requests.inc({ method, code });
    this.kc = ReusingKubeConfig.from(opts.kubeConfig);
    this.kube = new KubeClient(this.kc, opts.capabilitiesTtlMs, observer);
    const events =
      opts.events === false
        ? undefined
        : new EventRecorder(this.kc, {
            instance: this.identity,
            observer,
            onError: (err) => this.log.warn({ err: describeError(err) }, 'could not record an event'),
          });
    this.reconciler = new RecognitionServiceReconciler(
      this.kube,
      {
        getResource: (ns, name) => this.resources.get(name, ns) as unknown as RecognitionService | undefined,
        listPods: (ns) => this.pods.list(ns) as ObservedPod[],
        getDeployment: (ns, name) => this.deployments.get(name, ns) as ObservedDeployment | undefined,
        getChild: (ref) => this.childInformers.get(`${ref.apiVersion}/${ref.kind}`)?.get(ref.name, ref.namespace),
        childExists: (ref) => {
          const inf = this.childInformers.get(`${ref.apiVersion}/${ref.kind}`);
          return inf ? inf.get(ref.name, ref.namespace) !== undefined : undefined;
        },
      },
      { clusterDomain: opts.clusterDomain, events, prometheusUrl: opts.prometheusUrl, operatorPeer: opts.operatorPeer },
    );
    // Every replica reports the conditions it sees in its cache, the leader's writes included.
    this.metrics.reportConditionsOf(() => (this.resources ? (this.resources.list() as ConditionSource[]) : []));
    this.leaseName = opts.leaseName ?? 'recognition-operator-leader';
    this.metrics.isLeader.set({ name: this.leaseName }, 0);
    this.elector = new LeaderElector(this.kc, {
      namespace: opts.leaseNamespace,
      name: this.leaseName,
      identity: this.identity,
      observer,
      ...(opts.leaseTiming ?? DEFAULT_LEASE_TIMING),
      onStartedLeading: () => this.startLeading(),
      onStoppedLeading: () => this.stopLeading(),
      onError: (err) => this.log.warn({ err: describeError(err) }, 'leader election: lease call failed'),
    });
  }

  get isLeader(): boolean {
    return this.elector.isLeader;
  }

  get healthPort(): number | undefined {
    return this.health?.port;
  }

  async start(): Promise<void> {
    if (this.opts.health) {
      this.health = await startHealthServer(
        this.opts.health.host,
        this.opts.health.port,
        // Not ready while a cache cannot list (the CRD missing, RBAC too narrow...).
        { live: () => !this.stopping, ready: () => this.synced && this.failing.size === 0 && !this.stopping },
        this.metrics.registry,
      );
    }
    await this.startInformers();
    this.synced = true;
    this.elector.start();
    this.log.info({ identity: this.identity }, 'operator started; campaigning for leadership');
  }

  /**
   * One informer per kind, cluster-wide; in a namespaced install one per kind and watched
   * namespace (lists and watches under /namespaces/<ns>/, all a Role there allows).
   */
  private async startInformers(): Promise<void> {
    const kc = this.kc;
    const scopes = watchScopes(this.opts.namespaces);
    const scoped = (make: (ns: string | undefined) => AnyInformer, keyOf: (obj: KubernetesObject) => string | undefined): ScopedCache => {
      const byNamespace = new Map<string | undefined, AnyInformer>();
      for (const ns of scopes) {
        const inf = make(ns);
        byNamespace.set(ns, inf);
        this.watch(inf, keyOf);
      }
      return new ScopedCache(byNamespace);
    };
    const within = (ns: string | undefined) => (ns === undefined ? '' : `/namespaces/${encodeURIComponent(ns)}`);

    this.resources = scoped(
      (ns) => makeInformer<KubernetesObject>(kc, `/apis/${GROUP}/${VERSION}${within(ns)}/${PLURAL}`, () => this.kube.listRecognitionServices(ns) as never),
      (obj) => `${obj.metadata?.namespace}/${obj.metadata?.name}`,
    );

    const objects = KubernetesObjectApi.makeApiClient(kc);
    const childInformer = (apiVersion: string, kind: string, plural: string, group: string) => (ns: string | undefined) =>
      makeInformer<KubernetesObject>(
        kc,
        `${group === '' ? '/api/v1' : `/apis/${apiVersion}`}${within(ns)}/${plural}`,
        () => observed(this.kube.observer, 'LIST', () => objects.list(apiVersion, kind, ns, undefined, undefined, undefined, undefined, MANAGED_BY_SELECTOR)),
        MANAGED_BY_SELECTOR,
      );
    // Children: any change (a hand edit, a deletion, a rollout) re-reconciles the owner.
    // The ServiceMonitor's CRD is optional: watched when the cluster serves it at start; else
    // (Prometheus Operator installed later) the reconciler reads it on each pass until a restart.
    const caps = await this.kube.capabilities().catch(() => ({ serviceMonitor: false }));
    for (const k of CHILD_KINDS) {
      if (k.kind === 'ServiceMonitor' && !caps.serviceMonitor) continue;
      const cache = scoped(childInformer(k.apiVersion, k.kind, k.plural, k.group), ownerKey);
      if (k.kind === 'Deployment') this.deployments = cache;
      this.childInformers.set(`${k.apiVersion}/${k.kind}`, cache);
    }
    // The signing-key Secrets, as metadata only (controller-runtime's OnlyMetadata): the
    // reconciler needs to know one exists and which one (its uid), never its value, so no
    // Secret's value reaches the operator. A deleted one re-reconciles its owner at once.
    const asMetadata = metadataOnly(kc);
    const core = kc.makeApiClient(CoreV1Api);
    const listSecrets = (ns: string | undefined) => {
      const accept = setHeaderOptions('Accept', METADATA_LIST_ONLY);
      const labelSelector = MANAGED_BY_SELECTOR;
      return observed(this.kube.observer, 'LIST', () =>
        ns === undefined ? core.listSecretForAllNamespaces({ labelSelector }, accept) : core.listNamespacedSecret({ namespace: ns, labelSelector }, accept),
      );
    };
    this.childInformers.set(
      'v1/Secret',
      scoped((ns) => makeInformer<KubernetesObject>(asMetadata, `/api/v1${within(ns)}/secrets`, () => listSecrets(ns), MANAGED_BY_SELECTOR), ownerKey),
    );
    // Pods: their container statuses tell a crash loop from a slow start.
    this.pods = scoped(childInformer('v1', 'Pod', 'pods', ''), (obj) => {
      const instance = obj.metadata?.labels?.[INSTANCE_LABEL];
      return instance ? `${obj.metadata?.namespace}/${instance}` : undefined;
    });
    await Promise.all(this.informers.map((inf) => inf.start()));
  }

  private watch(inf: AnyInformer, keyOf: (obj: KubernetesObject) => string | undefined): void {
    this.informers.push(inf);
    const enqueue = (obj: KubernetesObject) => {
      const key = keyOf(obj);
      if (key && this.queue) {
        this.queue.add(key);
        this.metrics.queueDepth.set({ name: CONTROLLER }, this.queue.length);
      }
    };
    inf.on('add', enqueue);
    inf.on('update', enqueue);
    inf.on('delete', enqueue);
    inf.on('error', (err) => {
      this.failing.set(inf, (this.failing.get(inf) ?? 0) + 1);
      if (this.stopping) return;
      this.log.warn({ err: describeError(err) }, 'informer failed; restarting it');
      const t = setTimeout(() => {
        this.restartTimers.delete(t);
        if (this.stopping) return;
        const failures = this.failing.get(inf);
        inf.start().then(
          () => {
            if (this.failing.get(inf) === failures) this.failing.delete(inf);
          },
          () => undefined,
        );
      }, 2_000);
      this.restartTimers.add(t);
    });
  }

  private enqueueAll(): void {
    if (!this.queue) return;
    const all = this.resources.list();
    this.metrics.managedResources.set(all.length);
    for (const rs of all) this.queue.add(`${rs.metadata?.namespace}/${rs.metadata?.name}`);
    this.metrics.queueDepth.set({ name: CONTROLLER }, this.queue.length);
  }

  private startLeading(): void {
    if (this.stopping || this.queue) return;
    this.log.info({ identity: this.identity }, 'became leader');
    this.metrics.isLeader.set({ name: this.leaseName }, 1);
    const name = { name: CONTROLLER };
    const queue = new WorkQueue(this.opts.backoff, {
      onAdd: () => this.metrics.queueAdds.inc(name),
      onGet: (ms) => this.metrics.queueLatency.observe(name, ms / 1000),
      onRetry: () => this.metrics.queueRetries.inc(name),
    });
    this.queue = queue;
    this.workers = Array.from({ length: this.opts.workers ?? 2 }, () => this.work(queue));
    this.enqueueAll();
    this.resyncTimer = setInterval(() => this.enqueueAll(), this.opts.resyncPeriodMs ?? 5 * 60_000);
  }

  /**
   * Lost the Lease (or stopping): the workers finish what they hold and stop; the elector
   * keeps campaigning, and leading again starts a fresh queue from the caches.
   */
  private stopLeading(): void {
    const wasLeading = this.queue !== undefined;
    this.metrics.isLeader.set({ name: this.leaseName }, 0);
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.queue?.shutDown();
    this.queue = undefined;
    if (wasLeading && !this.stopping) {
      this.log.error({ identity: this.identity }, 'lost leadership; standing by and campaigning again');
      this.opts.onLostLeadership?.();
    }
  }

  private async work(queue: WorkQueue): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      this.metrics.queueDepth.set({ name: CONTROLLER }, queue.length);
      const end = this.metrics.reconcileDuration.startTimer({ controller: CONTROLLER });
      const endWork = this.metrics.workDuration.startTimer({ name: CONTROLLER });
      try {
        const result = await this.reconciler.reconcile(key);
        queue.forget(key);
        if (result.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
        this.metrics.reconciles.inc({ controller: CONTROLLER, result: 'success' });
        if (result.statusWritten) this.metrics.statusWrites.inc();
        if (result.applied > 0) this.metrics.childWrites.inc({ controller: CONTROLLER }, result.applied);
      } catch (err) {
        const reason = err instanceof ReconcileError ? err.reason : ((err as { code?: number }).code?.toString() ?? (err as Error).name ?? 'Error');
        this.metrics.reconciles.inc({ controller: CONTROLLER, result: 'error' });
        this.metrics.reconcileErrors.inc({ controller: CONTROLLER, reason });
        const delay = queue.addRateLimited(key);
        this.log.warn({ key, err: describeError(err), retryInMs: delay }, 'reconcile failed');
      } finally {
        end();
        endWork();
        queue.done(key);
      }
    }
  }

  /** Graceful stop: finish the reconciles in flight, hand back the Lease, close everything. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.queue?.shutDown();
    await Promise.all(this.workers);
    await this.elector.stop();
    for (const t of this.restartTimers) clearTimeout(t);
    await Promise.all(this.informers.map((inf) => inf.stop().catch(() => undefined)));
    await this.health?.close();
    this.kc.closeConnections();
    this.log.info({ identity: this.identity }, 'operator stopped');
  }
}

/** The same credentials, for a watch that asks for objects' metadata only (client-node's Watch takes its headers from here). */
function metadataOnly(kc: KubeConfig): KubeConfig {
  const out = Object.create(kc) as KubeConfig;
  out.applyToFetchOptions = async (opts) => {
    const init = await kc.applyToFetchOptions(opts);
    (init.headers as { set(name: string, value: string): void }).set('Accept', METADATA_ONLY);
    return init;
  };
  return out;
}

/** Key of the RecognitionService that controls a child, from its owner references. */
export function ownerKey(obj: KubernetesObject): string | undefined {
  const owner = obj.metadata?.ownerReferences?.find((o) => o.kind === KIND && o.controller);
  return owner ? `${obj.metadata?.namespace}/${owner.name}` : undefined;
}
