/** The operator's own Prometheus metrics, on a registry it owns (never the global one). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'result'>;
  readonly reconcileErrors: Counter<'reason'>;
  readonly reconcileDuration: Histogram;
  readonly queueDepth: Gauge;
  readonly isLeader: Gauge;
  readonly managedResources: Gauge;
  readonly statusWrites: Counter;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.reconciles = new Counter({
      name: 'recognition_operator_reconcile_total',
      help: 'Reconciles of RecognitionService resources, by result (success, error).',
      labelNames: ['result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'recognition_operator_reconcile_errors_total',
      help: 'Failed reconciles, by reason (HTTP status of the API server, or error name).',
      labelNames: ['reason'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'recognition_operator_reconcile_duration_seconds',
      help: 'Time of one reconcile of one RecognitionService.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.queueDepth = new Gauge({ name: 'recognition_operator_work_queue_depth', help: 'Keys waiting in the work queue.', registers });
    this.isLeader = new Gauge({ name: 'recognition_operator_leader', help: '1 while this instance holds the leader Lease.', registers });
    this.managedResources = new Gauge({ name: 'recognition_operator_managed_resources', help: 'RecognitionService resources in the informer cache.', registers });
    this.statusWrites = new Counter({ name: 'recognition_operator_status_writes_total', help: 'Status subresource writes (only when the status changed).', registers });
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'recognition_operator_' });
  }
}
