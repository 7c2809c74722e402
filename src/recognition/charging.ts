/**
 * Charging: the requests of one call claimed (sync idempotency), charged (quota, then
 * balance, in the contract's order) and written, by one atomic repository call. What the
 * repository cannot do atomically it refuses whole, so nothing here ever has to be undone.
 */
import { randomUUID } from 'node:crypto';
import { RecognitionRejected } from './errors.js';
import { utcMonth } from './month.js';
import type { ChargeOrder, ChargeResult, NewRequest, RequestRecord, RequestRepository } from './ports.js';
import type { Caller } from './types.js';

export interface ChargingDeps {
  requests: Pick<RequestRepository, 'charge'>;
  /** Milliseconds since the epoch; decides the quota month. */
  now?: () => number;
}

/** A request as the use case describes it; charging gives it its id. */
export type RequestDraft = Omit<NewRequest, 'id'>;

export type SyncClaim =
  /** The slot is ours: a fresh record (QUEUED, or PROCESSING for an image in the body), charged. */
  | { kind: 'claimed'; record: RequestRecord }
  /** The same image already ended DONE under this external_id: replay it, free of charge. */
  | { kind: 'replay'; record: RequestRecord };

/** How often a claim is retried when its holder ended ERROR between our check and our read. */
export const CLAIM_ATTEMPTS = 3;

const IN_PROGRESS = 'A request with this external_id is still processing; retry later';

export function secondsUntilNextMonthUtc(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export class RequestCharging {
  private readonly now: () => number;

  constructor(private readonly deps: ChargingDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Claims (key, external_id) for a sync request and charges it. A live holder with another
   * image is 422, one still running is 409, a DONE one with the same image is replayed.
   */
  async chargeSync(caller: Caller, draft: RequestDraft): Promise<SyncClaim> {
    const request = { ...draft, id: randomUUID() };
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const result = await this.deps.requests.charge(this.order(caller, [request], true, request.source === 'base64' ? 'PROCESSING' : 'QUEUED'));
      if (result.outcome === 'charged') return { kind: 'claimed', record: result.records[0] };
      if (result.outcome !== 'existing') throw this.refusal(caller, 1, result);
      const existing = result.record;
      // The holder ended ERROR (or vanished) meanwhile: the slot is free, try again.
      if (existing === null) continue;
      if (existing.imageFingerprint !== request.imageFingerprint) {
        throw new RecognitionRejected('IDEMPOTENCY_KEY_REUSED', 'This external_id was already used with a different image');
      }
      if (existing.status === 'DONE') return { kind: 'replay', record: existing };
      throw new RecognitionRejected('REQUEST_IN_PROGRESS', IN_PROGRESS);
    }
    throw new RecognitionRejected('REQUEST_IN_PROGRESS', IN_PROGRESS);
  }

  /** Charges one unit per request and writes them QUEUED, all or none; records in the drafts' order. */
  async chargeBatch(caller: Caller, drafts: RequestDraft[]): Promise<RequestRecord[]> {
    if (drafts.length === 0) return [];
    const requests = drafts.map((d) => ({ ...d, id: randomUUID() }));
    const result = await this.deps.requests.charge(this.order(caller, requests, false, 'QUEUED'));
    if (result.outcome === 'charged') return result.records;
    if (result.outcome === 'existing') throw new Error('a batch charge reported an idempotency holder');
    throw this.refusal(caller, requests.length, result);
  }

  /**
   * `status` is what CONTRACT.md's lifecycle says at acceptance: QUEUED while an image is
   * still to be fetched; PROCESSING for an image that came in the body, which has nothing
   * to wait for before inference (its store write aside), so no separate PROCESSING write
   * follows: one statement fewer per base64 sync call.
   */
  private order(caller: Caller, requests: NewRequest[], idempotent: boolean, status: ChargeOrder['status']): ChargeOrder {
    return {
      keyId: caller.keyId,
      orgId: caller.orgId,
      quota: caller.limits.monthlyQuota,
      month: utcMonth(this.now()),
      idempotent,
      status,
      requests,
    };
  }

  private refusal(caller: Caller, units: number, result: Extract<ChargeResult, { outcome: 'quota' | 'balance' }>): RecognitionRejected {
    if (result.outcome === 'quota') {
      return new RecognitionRejected('MONTHLY_QUOTA_EXCEEDED', `Monthly quota of ${caller.limits.monthlyQuota} requests exceeded (used ${result.used})`, {
        retryAfterSeconds: secondsUntilNextMonthUtc(new Date(this.now())),
      });
    }
    return new RecognitionRejected('INSUFFICIENT_BALANCE', `Insufficient API calls balance: this call needs ${units}`);
  }
}
