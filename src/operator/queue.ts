/**
 * Work queue of resource keys ("namespace/name"), in the manner of client-go's:
 * - a key waiting in the queue is held once however often it is added (dedup);
 * - a key being processed is never handed out again until done(); an add meanwhile
 *   marks it dirty and it is queued again at done() (one reconcile in flight per key);
 * - addRateLimited() delays a key by its own exponential backoff, forget() resets it.
 */
import { backoffDelay } from '../backoff.js';

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Observers for the workqueue_* metrics. */
export interface QueueHooks {
  onAdd?(): void;
  /** A key handed to a worker after waiting this long in the queue. */
  onGet?(waitedMs: number): void;
  onRetry?(): void;
}

export class WorkQueue {
  private readonly addedAt = new Map<string, number>();
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;

  constructor(
    private readonly backoff: BackoffOptions = { baseDelayMs: 500, maxDelayMs: 300_000 },
    private readonly hooks: QueueHooks = {},
  ) {}

  get length(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.shuttingDown) return;
    this.hooks.onAdd?.();
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      this.hooks.onGet?.(0);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.addedAt.set(key, Date.now());
    this.queue.push(key);
  }

  /** Adds the key after a delay; a sooner pending delay for the key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const due = Date.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending) {
      if (pending.due <= due) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { timer, due });
  }

  /** Re-adds a failed key after base * 2^failures (capped); returns the delay. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.hooks.onRetry?.();
    const delay = backoffDelay(n, { baseMs: this.backoff.baseDelayMs, capMs: this.backoff.maxDelayMs });
    this.addAfter(key, delay);
    return delay;
  }

  /** Clears the key's failure count after a success. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Next key to process, or undefined once shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.hooks.onGet?.(Date.now() - (this.addedAt.get(key) ?? Date.now()));
      this.addedAt.delete(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Keys being processed right now (for graceful shutdown). */
  get inFlight(): number {
    return this.processing.size;
  }
}
