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
  keyId: string;
  orgId: string;
  kind: RequestKind;
  externalId: string | null;
  source: ImageSource;
  sourceUrl: string | null;
  imageFingerprint: string;
  /**
   * The UTC month ('YYYY-MM') its one unit of quota (and of balance) is charged in, recorded
   * before charging so a crash can never leave a charge without a record; null: not charged.
   */
  chargeMonth?: string | null;
}

export type ClaimResult =
  | { claimed: true; record: RequestRecord }
  /** Another live request holds (key, external_id); null when it ended ERROR or vanished meanwhile. */
  | { claimed: false; existing: RequestRecord | null };

export interface RequestRepository {
  /** Inserts a QUEUED sync request unless a live one holds (key, external_id); atomic across replicas. */
  claimSync(request: NewRequest): Promise<ClaimResult>;
  createQueued(requests: NewRequest[]): Promise<RequestRecord[]>;
  markImageStored(id: string): Promise<void>;
  /** Records that the request's unit was charged in `month` (so a later refund knows where to give it back). */
  markCharged(id: string, month: string): Promise<void>;
  /** QUEUED → PROCESSING; false when the request already ended (e.g. timed out). */
  markProcessing(id: string): Promise<boolean>;
  /** Ends an unfinished request DONE; false when it had already ended. */
  finishDone(id: string, done: { results: Detection[]; model: ModelRef; processingTimeMs: number }): Promise<boolean>;
  /**
   * Ends an unfinished request ERROR; false when it had already ended. With `refund`, its
   * charge is given back in the same statement (the service's fault: timeout, internal error,
   * inference down), exactly once.
   */
  finishError(id: string, failure: { error: string; responseCode: number | null; processingTimeMs?: number; refund?: boolean }): Promise<boolean>;
  /**
   * The client was told the request failed although it may have ended DONE (the answer could
   * not be confirmed): ends it ERROR whatever its state but ERROR, and refunds it, exactly once.
   */
  failUndelivered(id: string, error: string, responseCode: number): Promise<boolean>;
  /** Removes an unfinished request that was refused before processing (nothing half-written stays). */
  discard(id: string): Promise<boolean>;
  findById(id: string): Promise<RequestRecord | null>;
}

export interface FeedbackRepository {
  /** Replaces the current rating and appends to the history, atomically. */
  rate(requestId: string, keyId: string, rating: -1 | 0 | 1): Promise<void>;
}
