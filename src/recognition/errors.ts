/**
 * Why the use case refused a call. The codes are the API catalogue's (src/api/errors.ts);
 * the API maps them to statuses, this layer only names the reason. An image the client
 * got wrong is refused with its ImageError as is (src/recognition/image-ports.ts).
 */
export type RejectionCode =
  | 'INVALID_PARAMETERS'
  | 'MONTHLY_QUOTA_EXCEEDED'
  | 'INSUFFICIENT_BALANCE'
  | 'REQUEST_IN_PROGRESS'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'PROCESSING_TIMEOUT'
  | 'REQUEST_NOT_FOUND'
  | 'REQUEST_FORBIDDEN';

export class RecognitionRejected extends Error {
  override readonly name = 'RecognitionRejected';
  constructor(
    readonly code: RejectionCode,
    message: string,
    readonly details: { externalId?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }
}
