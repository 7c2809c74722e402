/**
 * Kubernetes Events on RecognitionServices, through events.k8s.io/v1, rate-limited as
 * client-go's recorder does it: the same event for the same object is written once per
 * window, and each object has a small token bucket so a flapping resource cannot flood
 * the API server. Recording never fails a reconcile: errors go to the logger.
 */
import crypto from 'node:crypto';
import { EventsV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, KIND, type RecognitionService } from './api/types.js';
import { FIELD_MANAGER } from './desired/index.js';
import { observed, type RequestObserver } from './kube.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** reportingInstance: the operator pod. */
  instance: string;
  /** A repeat of the same (object, reason, note) within this window is dropped. */
  dedupWindowMs?: number;
  /** Token bucket per object: burst, then one event per refillMs. */
  burst?: number;
  refillMs?: number;
  observer?: RequestObserver;
  onError?: (err: unknown) => void;
  now?: () => number;
}

export interface Sink {
  create(namespace: string, body: Record<string, unknown>): Promise<void>;
}

export class EventRecorder {
  private readonly recent = new Map<string, number>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly sink: Sink;
  private readonly now: () => number;

  constructor(kcOrSink: KubeConfig | Sink, private readonly opts: EventRecorderOptions) {
    this.now = opts.now ?? Date.now;
    if ('create' in kcOrSink) {
      this.sink = kcOrSink;
    } else {
      const api = kcOrSink.makeApiClient(EventsV1Api);
      this.sink = {
        create: async (namespace, body) => {
          await observed(opts.observer, 'POST', () => api.createNamespacedEvent({ namespace, body: body as never }));
        },
      };
    }
  }

  /** Records an event unless rate-limited; returns whether it was sent. */
  record(rs: RecognitionService, type: EventType, reason: string, action: string, note: string): boolean {
    const t = this.now();
    const uid = rs.metadata.uid;
    const key = `${uid}\u0000${type}\u0000${reason}\u0000${note}`;
    const window = this.opts.dedupWindowMs ?? 10 * 60_000;
    const last = this.recent.get(key);
    if (last !== undefined && t - last < window) return false;
    const burst = this.opts.burst ?? 25;
    const refill = this.opts.refillMs ?? 5 * 60_000;
    const b = this.buckets.get(uid) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + (t - b.at) / refill);
    b.at = t;
    this.buckets.set(uid, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    this.recent.set(key, t);
    if (this.recent.size > 10_000) this.prune(t, window);

    const namespace = rs.metadata.namespace;
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${rs.metadata.name}.${crypto.randomBytes(8).toString('hex')}`, namespace },
      eventTime: new V1MicroTime(t),
      reportingController: `cv.recognition.io/${FIELD_MANAGER}`,
      reportingInstance: this.opts.instance,
      action,
      reason,
      type,
      // The API server caps a note at 1 kB.
      note: note.length > 1000 ? `${note.slice(0, 997)}...` : note,
      regarding: { apiVersion: API_VERSION, kind: KIND, name: rs.metadata.name, namespace, uid, resourceVersion: rs.metadata.resourceVersion },
    };
    this.sink.create(namespace, body).catch((err) => this.opts.onError?.(err));
    return true;
  }

  private prune(t: number, window: number): void {
    for (const [k, at] of this.recent) if (t - at >= window) this.recent.delete(k);
  }
}
