/**
 * What the recognition use case needs from the outside world, as interfaces it owns.
 * src/store implements the repositories; src/images and src/limits the rest.
 */
import type { Detection, ModelRef } from './detection.js';

export type RequestStatus = 'QUEUED' | 'PROCESSING' | 'DONE' | 'ERROR';
export type RequestKind = 'sync' | 'batch';
export type ImageSource = 'url' | 'base64';

export interface RequestRecord {
  id: string;
  keyId: string;
  orgId: string;
  kind: RequestKind;
  /** Null only on batch rows written before every batch got an id. */
  externalId: string | null;
  status: RequestStatus;
  source: ImageSource;
  sourceUrl: string | null;
  imageFingerprint: string;
  imageStored: boolean;
  results: Detection[];
  error: string | null;
  responseCode: number | null;
  model: ModelRef | null;
  processingTimeMs: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface NewRequest {
  /** Chosen by the caller (a random UUID), so a repeated charge finds what it wrote. */
  id: string;
  keyId: string;
  orgId: string;
  kind: RequestKind;
  /** Sync: the idempotency id; batch: the batch's id (the client's external_id, or one assigned). */
  externalId: string;
  source: ImageSource;
  sourceUrl: string | null;
  imageFingerprint: string;
}

/** One charge order: the requests of one call, charged one unit each, in one transaction. */
export interface ChargeOrder {
  keyId: string;
  orgId: string;
  /** The key's monthly quota, and the UTC month ('YYYY-MM') the units are counted in. */
  quota: number;
  month: string;
  /** Sync: claim the (key, external_id) slot of the one request, or report who holds it. */
  idempotent: boolean;
  /**
   * The status the rows start in: QUEUED (accepted, an image to fetch), or PROCESSING
   * (started_at set at once) for a sync request whose image came in the body.
   */
  status: 'QUEUED' | 'PROCESSING';
  requests: NewRequest[];
}

export type ChargeResult =
  /** Charged, and the rows written, in the order given; each records the month it was charged in. */
  | { outcome: 'charged'; records: RequestRecord[] }
  /** A live sync request holds the external_id (null: it ended ERROR meanwhile); nothing charged. */
  | { outcome: 'existing'; record: RequestRecord | null }
  /** The quota has no room for these units; `used` is this month's usage. Nothing charged. */
  | { outcome: 'quota'; used: number }
  /** The organisation's balance is short. Nothing charged. */
  | { outcome: 'balance' };

export interface RequestFailure {
  error: string;
  responseCode: number | null;
  processingTimeMs?: number;
  /** Give the charge back (the service's fault). */
  refund?: boolean;
  /** False when the image was never kept (it could not be fetched or stored). */
  imageStored?: boolean;
}

export interface RequestRepository {
  /**
   * Claims (sync), reserves quota, debits the balance and writes the rows, all or nothing,
   * atomic across replicas; safe to repeat after an unknown outcome.
   */
  charge(order: ChargeOrder): Promise<ChargeResult>;
  /** QUEUED → PROCESSING; false when the request already ended (e.g. timed out). */
  markProcessing(id: string): Promise<boolean>;
  /** Ends an unfinished request DONE; false when it had already ended. */
  finishDone(id: string, done: { results: Detection[]; model: ModelRef; processingTimeMs: number }): Promise<boolean>;
  /**
   * Ends an unfinished request ERROR; false when it had already ended. With `refund`, its
   * charge is given back in the same statement (the service's fault: timeout, internal error,
   * inference down), exactly once.
   */
  finishError(id: string, failure: RequestFailure): Promise<boolean>;
  /**
   * The client was told the request failed although it may have ended DONE (the answer could
   * not be confirmed): ends it ERROR whatever its state but ERROR, and refunds it, exactly once.
   */
  failUndelivered(id: string, error: string, responseCode: number): Promise<boolean>;
  /**
   * Removes an unfinished request that was refused before processing (nothing half-written
   * stays) and gives its charge back, in one statement.
   */
  discard(id: string): Promise<boolean>;
  findById(id: string): Promise<RequestRecord | null>;
}

export interface FeedbackRepository {
  /** Replaces the current rating and appends to the history, atomically; returns the rating it replaced (null: the first). */
  rate(requestId: string, keyId: string, rating: -1 | 0 | 1): Promise<-1 | 0 | 1 | null>;
}
