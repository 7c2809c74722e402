/**
 * In-memory fakes of the recognition use case's ports, for unit tests of its logic only
 * (the real repositories are tested against PostgreSQL in test/store and test/api).
 */
import { randomUUID } from 'node:crypto';
import type { KeyLimits, Limits, QuotaDecision } from '../../src/limits/types.js';
import type { ClaimResult, NewRequest, RequestRecord, RequestRepository } from '../../src/recognition/ports.js';
import type { Caller, Logger } from '../../src/recognition/types.js';

export class InMemoryRequests implements RequestRepository {
  readonly rows = new Map<string, RequestRecord>();
  readonly calls: string[] = [];
  /** Answers for claimSync, taken in order before the default behaviour. */
  readonly scriptedClaims: ClaimResult[] = [];

  private make(r: NewRequest): RequestRecord {
    return {
      id: randomUUID(),
      ...r,
      status: 'QUEUED',
      imageStored: false,
      results: [],
      error: null,
      responseCode: null,
      model: null,
      processingTimeMs: null,
      createdAt: new Date(),
      startedAt: null,
      finishedAt: null,
    };
  }

  async claimSync(request: NewRequest): Promise<ClaimResult> {
    this.calls.push('claimSync');
    const scripted = this.scriptedClaims.shift();
    if (scripted) return scripted;
    const live = [...this.rows.values()].find((r) => r.keyId === request.keyId && r.externalId === request.externalId && r.status !== 'ERROR');
    if (live) return { claimed: false, existing: { ...live } };
    const record = this.make(request);
    this.rows.set(record.id, record);
    return { claimed: true, record: { ...record } };
  }
  async createQueued(requests: NewRequest[]): Promise<RequestRecord[]> {
    this.calls.push('createQueued');
    return requests.map((r) => {
      const record = this.make(r);
      this.rows.set(record.id, record);
      return { ...record };
    });
  }
  async markImageStored(id: string): Promise<void> {
    this.calls.push('markImageStored');
    const r = this.rows.get(id);
    if (r) r.imageStored = true;
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
  async finishError(id: string, failure: Parameters<RequestRepository['finishError']>[1]): Promise<boolean> {
    this.calls.push('finishError');
    const r = this.unfinished(id);
    if (!r) return false;
    Object.assign(r, { status: 'ERROR', error: failure.error, responseCode: failure.responseCode, processingTimeMs: failure.processingTimeMs ?? null, finishedAt: new Date() });
    if (failure.refund) this.refunded.add(id);
    return true;
  }
  /** Requests whose charge was given back by the repository (finishError refund, failUndelivered). */
  readonly refunded = new Set<string>();
  readonly chargeMonths = new Map<string, string>();
  async markCharged(id: string, month: string): Promise<void> {
    this.calls.push('markCharged');
    this.chargeMonths.set(id, month);
  }
  async failUndelivered(id: string, error: string, responseCode: number): Promise<boolean> {
    this.calls.push('failUndelivered');
    const r = this.rows.get(id);
    if (!r || r.status === 'ERROR') return false;
    Object.assign(r, { status: 'ERROR', error, responseCode, finishedAt: new Date() });
    this.refunded.add(id);
    return true;
  }
  async discard(id: string): Promise<boolean> {
    this.calls.push('discard');
    return this.unfinished(id) !== null && this.rows.delete(id);
  }
  async findById(id: string): Promise<RequestRecord | null> {
    this.calls.push('findById');
    const r = this.rows.get(id);
    return r ? { ...r } : null;
  }
}

/** Quota and balance kept in memory; `failDebit` makes the next debit throw. */
export class InMemoryLimits implements Pick<Limits, 'reserveQuota' | 'releaseQuota' | 'debitBalance' | 'refundBalance'> {
  used = 0;
  failDebit: Error | null = null;
  readonly releases: Array<{ units: number; period?: string }> = [];
  constructor(
    public quota: number,
    public balance: number,
  ) {}
  async reserveQuota(_key: KeyLimits, units: number): Promise<QuotaDecision> {
    if (this.used + units > this.quota) return { allowed: false, limit: this.quota, used: this.used };
    this.used += units;
    return { allowed: true, limit: this.quota, used: this.used, period: '2026-11' };
  }
  async releaseQuota(_key: KeyLimits, units: number, period?: string): Promise<void> {
    this.releases.push({ units, period });
    this.used -= units;
  }
  async debitBalance(_orgId: string, units: number): Promise<boolean> {
    if (this.failDebit) throw this.failDebit;
    if (this.balance < units) return false;
    this.balance -= units;
    return true;
  }
  async refundBalance(_orgId: string, units: number): Promise<void> {
    this.balance += units;
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
  return { keyId: 'key-1', orgId: 'org-1', kind: 'sync', externalId: 'ext-1', source: 'url', sourceUrl: 'https://img.example/a.jpg', imageFingerprint: 'url:https://img.example/a.jpg', ...overrides };
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
