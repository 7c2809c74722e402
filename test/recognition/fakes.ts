/**
 * In-memory fakes of the recognition use case's ports, for unit tests of its logic only
 * (the real repositories are tested against PostgreSQL in test/store and test/api).
 */
import { randomUUID } from 'node:crypto';
import type { ChargeOrder, ChargeResult, NewRequest, RequestFailure, RequestRecord, RequestRepository } from '../../src/recognition/ports.js';
import type { Caller, Logger } from '../../src/recognition/types.js';

/**
 * Requests, quota and balance in memory, with the repository's all-or-nothing charge:
 * `used` counts the units charged, `balance` what is left (null: unlimited).
 */
export class InMemoryRequests implements RequestRepository {
  readonly rows = new Map<string, RequestRecord>();
  readonly calls: string[] = [];
  /** Answers for charge, taken in order before the default behaviour. */
  readonly scriptedAdmits: ChargeResult[] = [];
  /** Requests whose charge was given back (discard, finishError with refund, failUndelivered). */
  readonly refunded = new Set<string>();
  used = 0;

  constructor(
    public quota = 100,
    public balance: number | null = 100,
  ) {}

  private make(r: NewRequest, status: RequestRecord['status']): RequestRecord {
    return {
      ...r,
      status,
      imageStored: true,
      results: [],
      error: null,
      responseCode: null,
      model: null,
      processingTimeMs: null,
      createdAt: new Date(),
      startedAt: status === 'PROCESSING' ? new Date() : null,
      finishedAt: null,
    };
  }

  async charge(a: ChargeOrder): Promise<ChargeResult> {
    this.calls.push('charge');
    const scripted = this.scriptedAdmits.shift();
    if (scripted) return scripted;
    const units = a.requests.length;
    if (a.idempotent) {
      const first = a.requests[0];
      const live = [...this.rows.values()].find((r) => r.keyId === first.keyId && r.externalId === first.externalId && r.status !== 'ERROR');
      if (live) return { outcome: 'existing', record: { ...live } };
    }
    // The tighter of the caller's quota and the one this fake was made with.
    if (this.used + units > Math.min(a.quota, this.quota)) return { outcome: 'quota', used: this.used };
    if (this.balance !== null && this.balance < units) return { outcome: 'balance' };
    this.used += units;
    if (this.balance !== null) this.balance -= units;
    const records = a.requests.map((r) => this.make(r, a.status));
    for (const r of records) this.rows.set(r.id, r);
    return { outcome: 'charged', records: records.map((r) => ({ ...r })) };
  }
  private giveBack(id: string): void {
    this.refunded.add(id);
    this.used -= 1;
    if (this.balance !== null) this.balance += 1;
  }
  async markProcessing(id: string): Promise<boolean> {
    this.calls.push('markProcessing');
    const r = this.rows.get(id);
    if (!r || r.status !== 'QUEUED') return false;
    r.status = 'PROCESSING';
    r.startedAt = new Date();
    return true;
  }
  private unfinished(id: string): RequestRecord | null {
    const r = this.rows.get(id);
    return r && (r.status === 'QUEUED' || r.status === 'PROCESSING') ? r : null;
  }
  async finishDone(id: string, done: Parameters<RequestRepository['finishDone']>[1]): Promise<boolean> {
    this.calls.push('finishDone');
    const r = this.unfinished(id);
    if (!r) return false;
    Object.assign(r, { status: 'DONE', results: done.results, model: done.model, processingTimeMs: done.processingTimeMs, finishedAt: new Date() });
    return true;
  }
  async finishError(id: string, failure: RequestFailure): Promise<boolean> {
    this.calls.push('finishError');
    const r = this.unfinished(id);
    if (!r) return false;
    Object.assign(r, { status: 'ERROR', error: failure.error, responseCode: failure.responseCode, processingTimeMs: failure.processingTimeMs ?? null, finishedAt: new Date() });
    if (failure.imageStored !== undefined) r.imageStored = failure.imageStored;
    if (failure.refund) this.giveBack(id);
    return true;
  }
  async failUndelivered(id: string, error: string, responseCode: number): Promise<boolean> {
    this.calls.push('failUndelivered');
    const r = this.rows.get(id);
    if (!r || r.status === 'ERROR') return false;
    Object.assign(r, { status: 'ERROR', error, responseCode, finishedAt: new Date() });
    this.giveBack(id);
    return true;
  }
  async discard(id: string): Promise<boolean> {
    this.calls.push('discard');
    if (this.unfinished(id) === null) return false;
    this.rows.delete(id);
    this.giveBack(id);
    return true;
  }
  async findById(id: string): Promise<RequestRecord | null> {
    this.calls.push('findById');
    const r = this.rows.get(id);
    return r ? { ...r } : null;
  }
}

export const caller: Caller = {
  keyId: 'key-1',
  orgId: 'org-1',
  classes: ['*'],
  limits: { keyId: 'key-1', orgId: 'org-1', rateLimitPerMinute: null, monthlyQuota: 100 },
};

export function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, warn: () => {}, error: (_o, msg) => errors.push(msg) };
}

export function newRequest(overrides: Partial<NewRequest> = {}): NewRequest {
  return { id: randomUUID(), keyId: 'key-1', orgId: 'org-1', kind: 'sync', externalId: 'ext-1', source: 'url', sourceUrl: 'https://img.example/a.jpg', imageFingerprint: 'url:https://img.example/a.jpg', ...overrides };
}

/** A promise with its resolve/reject exposed. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Keeps the event loop alive for the file's tests: AbortSignal.timeout's clock does not
 * (a server's sockets do that in production), and a unit test has nothing else open.
 */
export function holdEventLoop(): () => void {
  const keep = setInterval(() => {}, 1_000);
  return () => clearInterval(keep);
}
