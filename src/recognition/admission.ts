/**
 * Admission: claiming the (key, external_id) slot of a sync request, charging quota then
 * balance in the contract's order, and giving back what was charged for work that never ran.
 */
import type { Limits } from '../limits/types.js';
import { RecognitionRejected } from './errors.js';
import type { NewRequest, RequestRecord, RequestRepository } from './ports.js';
import type { Caller, Logger } from './types.js';

export interface AdmissionDeps {
  requests: Pick<RequestRepository, 'claimSync'>;
  limits: Pick<Limits, 'reserveQuota' | 'releaseQuota' | 'debitBalance' | 'refundBalance'>;
  logger: Logger;
}

export type SyncClaim =
  /** The slot is ours: a fresh QUEUED record. */
  | { kind: 'claimed'; record: RequestRecord }
  /** The same image already ended DONE under this external_id: replay it, free of charge. */
  | { kind: 'replay'; record: RequestRecord };

/** How often a claim is retried when its holder ended ERROR between our insert and our read. */
export const CLAIM_ATTEMPTS = 3;

const IN_PROGRESS = 'A request with this external_id is still processing; retry later';

export function secondsUntilNextMonthUtc(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export class Admission {
  constructor(private readonly deps: AdmissionDeps) {}

  /**
   * Claims (key, external_id) for a sync request. A live holder with another image is 422,
   * one still running is 409, a DONE one with the same image is replayed.
   */
  async claimSync(request: NewRequest): Promise<SyncClaim> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const claim = await this.deps.requests.claimSync(request);
      if (claim.claimed) return { kind: 'claimed', record: claim.record };
      const existing = claim.existing;
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

  /**
   * Quota, then balance, in the contract's order; undoes what it took when a later step
   * refuses or fails, and runs `undo` (e.g. removing the claimed record). Returns the quota
   * month charged, so a give-back after midnight UTC on the 1st returns to the month it came from.
   */
  async charge(caller: Caller, units: number, undo: () => Promise<void>): Promise<string | undefined> {
    const { limits } = this.deps;
    let quotaTaken = false;
    let period: string | undefined;
    try {
      const quota = await limits.reserveQuota(caller.limits, units);
      if (!quota.allowed) {
        await undo();
        throw new RecognitionRejected('MONTHLY_QUOTA_EXCEEDED', `Monthly quota of ${quota.limit} requests exceeded (used ${quota.used})`, {
          retryAfterSeconds: secondsUntilNextMonthUtc(),
        });
      }
      quotaTaken = true;
      period = quota.period;
      const paid = await limits.debitBalance(caller.orgId, units);
      if (!paid) {
        await limits.releaseQuota(caller.limits, units, period);
        quotaTaken = false;
        await undo();
        throw new RecognitionRejected('INSUFFICIENT_BALANCE', `Insufficient API calls balance: this call needs ${units}`);
      }
    } catch (err) {
      if (!(err instanceof RecognitionRejected)) {
        if (quotaTaken) await limits.releaseQuota(caller.limits, units, period).catch(() => {});
        await undo().catch(() => {});
      }
      throw err;
    }
    return period;
  }

  /** Returns quota and balance for work that never ran; logs rather than throws. */
  async giveBack(caller: Caller, units: number, period: string | undefined): Promise<void> {
    try {
      await this.deps.limits.releaseQuota(caller.limits, units, period);
      await this.deps.limits.refundBalance(caller.orgId, units);
    } catch (err) {
      this.deps.logger.error({ err, keyId: caller.keyId, units }, 'could not give back quota/balance');
    }
  }
}
