/**
 * The operator's own Prometheus metrics, on a registry it owns (never the global one), under
 * the names controller-runtime and client-go use, so the usual dashboards and alerts fit:
 * controller_runtime_reconcile_*, workqueue_*, leader_election_master_status,
 * rest_client_requests_total.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ROLLOUT_PHASES } from './api/schema.js';

export const CONTROLLER = 'recognitionservice';

/** What the condition gauge reads of a RecognitionService in the cache. */
export interface ConditionSource {
  metadata?: { namespace?: string; name?: string };
  status?: {
    conditions?: Array<{ type?: string; status?: string }>;
    rollout?: { phase?: string; canary?: { name?: string; version?: string }; canaryWeight?: number };
  };
}

const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** The resources of `source` that have a namespace and a name, with them. */
function* named(source: Iterable<ConditionSource>): Generator<{ namespace: string; name: string; rs: ConditionSource }> {
  for (const rs of source) {
    const { namespace, name } = rs.metadata ?? {};
    if (namespace && name) yield { namespace, name, rs };
  }
}

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller' | 'reason'>;
  readonly reconcileDuration: Histogram<'controller'>;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly queueLatency: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly isLeader: Gauge<'name'>;
  readonly requests: Counter<'method' | 'code'>;
  readonly childWrites: Counter<'controller'>;
  readonly managedResources: Gauge;
  readonly statusWrites: Counter;
  readonly resourceConditions: Gauge<'namespace' | 'name' | 'type' | 'status'>;
  readonly rolloutPhase: Gauge<'namespace' | 'name' | 'canary' | 'phase'>;
  readonly canaryWeight: Gauge<'namespace' | 'name' | 'canary'>;
  /** The RecognitionServices to report conditions of: the operator's informer cache. */
  private conditionSource: () => Iterable<ConditionSource> = () => [];

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
    this.reconciles = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller, by result (success, error).',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller, by reason (HTTP status, OwnershipConflict, error name).',
      labelNames: ['controller', 'reason'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller.',
      labelNames: ['controller'],
      buckets: seconds,
      registers,
    });
    this.queueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of the work queue.', labelNames: ['name'], registers });
    this.queueAdds = new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by the work queue.', labelNames: ['name'], registers });
    this.queueRetries = new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries (rate-limited re-adds) handled by the work queue.', labelNames: ['name'], registers });
    this.queueLatency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in the work queue before being requested.',
      labelNames: ['name'],
      buckets: seconds,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from the work queue takes.',
      labelNames: ['name'],
      buckets: seconds,
      registers,
    });
    this.isLeader = new Gauge({ name: 'leader_election_master_status', help: '1 while this instance holds the leader Lease, else 0.', labelNames: ['name'], registers });
    this.requests = new Counter({
      name: 'rest_client_requests_total',
      help: 'API server requests made by the operator, by HTTP method and status code.',
      labelNames: ['method', 'code'],
      registers,
    });
    this.childWrites = new Counter({
      name: 'recognition_operator_child_writes_total',
      help: 'Server-side applies of children (zero in a steady state: unchanged children are not written).',
      labelNames: ['controller'],
      registers,
    });
    this.managedResources = new Gauge({ name: 'recognition_operator_managed_resources', help: 'RecognitionService resources in the informer cache.', registers });
    this.statusWrites = new Counter({ name: 'recognition_operator_status_writes_total', help: 'Status subresource writes (only when the status changed).', registers });
    // kube-state-metrics style (kube_pod_status_condition): one series per condition type and
    // possible status, 1 on the current one. Rebuilt from the cache at each scrape, so a
    // deleted resource's series go with it and a standby replica reports what the leader wrote.
    const source = () => this.conditionSource();
    this.resourceConditions = new Gauge({
      name: 'recognition_operator_resource_condition',
      help: 'Status of each condition of each RecognitionService: 1 for its current status (True, False or Unknown), 0 for the others.',
      labelNames: ['namespace', 'name', 'type', 'status'],
      registers,
      collect() {
        this.reset();
        for (const { namespace, name, rs } of named(source())) {
          for (const c of rs.status?.conditions ?? []) {
            if (!c.type) continue;
            for (const status of CONDITION_STATUSES) this.set({ namespace, name, type: c.type, status }, c.status === status ? 1 : 0);
          }
        }
      },
    });
    // status.rollout the same way: the phase (1 on the current one) and the weight the API pods
    // are given, labelled with the canary (model:version, '' without one).
    const canaryOf = (rs: ConditionSource) => {
      const c = rs.status?.rollout?.canary;
      return c?.name ? `${c.name}:${c.version ?? ''}` : '';
    };
    this.rolloutPhase = new Gauge({
      name: 'recognition_operator_rollout_phase',
      help: "Phase of each RecognitionService's model rollout (status.rollout.phase): 1 for the current one (Stable, Canary, Analysing, Promoted, RolledBack), 0 for the others.",
      labelNames: ['namespace', 'name', 'canary', 'phase'],
      registers,
      collect() {
        this.reset();
        for (const { namespace, name, rs } of named(source())) {
          const phase = rs.status?.rollout?.phase;
          if (phase) for (const p of ROLLOUT_PHASES) this.set({ namespace, name, canary: canaryOf(rs), phase: p }, phase === p ? 1 : 0);
        }
      },
    });
    this.canaryWeight = new Gauge({
      name: 'recognition_operator_rollout_canary_weight',
      help: 'Percent of requests the API pods of each RecognitionService send to its canary (status.rollout.canaryWeight).',
      labelNames: ['namespace', 'name', 'canary'],
      registers,
      collect() {
        this.reset();
        for (const { namespace, name, rs } of named(source())) {
          const r = rs.status?.rollout;
          if (r?.phase) this.set({ namespace, name, canary: canaryOf(rs) }, r.canaryWeight ?? 0);
        }
      },
    });
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'recognition_operator_' });
  }

  /** Where recognition_operator_resource_condition and the rollout gauges read the resources from at each scrape. */
  reportConditionsOf(source: () => Iterable<ConditionSource>): void {
    this.conditionSource = source;
  }
}
