/**
 * The one catalogue of API errors. Each code is stable (never reused for another meaning)
 * and fixes its HTTP status and the `error` field's style: a snake_case type (style A) or
 * the title-case HTTP phrase (style B), as the contract assigns per case. Every error body
 * carries all three fields: error, message, error_code.
 */
import type { RejectionReason } from '../telemetry/metrics.js';

interface ErrorSpec {
  status: number;
  error: string;
  /** Default message; callers may give a more specific one (never for 500). */
  message: string;
}

export const ERROR_CATALOGUE = {
  // 400
  INVALID_PARAMETERS: { status: 400, error: 'Bad Request', message: 'Invalid or missing parameters' },
  INVALID_EXTERNAL_ID: { status: 400, error: 'Bad Request', message: 'external_id must be 1 to 255 characters without control characters' },
  INVALID_IMAGE_URL: { status: 400, error: 'Bad Request', message: 'image_url must be a public http or https URL of at most 2048 characters' },
  INVALID_IMAGE_BASE64: { status: 400, error: 'Bad Request', message: 'image_base64 is not valid base64 data' },
  UNSUPPORTED_IMAGE_FORMAT: { status: 400, error: 'Bad Request', message: 'Unsupported image format: send JPEG, PNG, WebP or GIF' },
  IMAGE_TOO_LARGE: { status: 400, error: 'Bad Request', message: 'The image is too large' },
  MISSING_IMAGE_URLS: { status: 400, error: 'invalid_request', message: 'image_urls is required and must contain 1 to 10 URLs' },
  TOO_MANY_IMAGES: { status: 400, error: 'invalid_request', message: 'Too many images: the maximum is 10 per batch' },
  INVALID_REQUEST_ID: { status: 400, error: 'missing_request_id', message: 'A valid request id (UUID) is required' },
  INVALID_RATING: { status: 400, error: 'invalid_rating', message: 'rating must be -1 (bad), 0 (neutral) or 1 (good)' },
  // console API (src/console): session-authenticated, never with an x-api-key
  VALIDATION_FAILED: { status: 400, error: 'Bad Request', message: 'The request is invalid' },
  MALFORMED_REQUEST: { status: 400, error: 'Bad Request', message: 'The HTTP request is malformed' },
  // 401
  MISSING_API_KEY: { status: 401, error: 'unauthorized', message: 'Missing API key: send it in the x-api-key header' },
  INVALID_API_KEY: { status: 401, error: 'unauthorized', message: 'Invalid API key' },
  API_KEY_EXPIRED: { status: 401, error: 'unauthorized', message: 'The API key has expired' },
  UNAUTHENTICATED: { status: 401, error: 'unauthorized', message: 'Sign in first: a valid session is required' },
  INVALID_CREDENTIALS: { status: 401, error: 'unauthorized', message: 'Wrong e-mail or password' },
  REFRESH_REUSED: { status: 401, error: 'unauthorized', message: 'This refresh token was already used; the session has been revoked, sign in again' },
  INVALID_MFA_CODE: { status: 401, error: 'unauthorized', message: 'Wrong or already used authentication code' },
  // 402
  INSUFFICIENT_BALANCE: { status: 402, error: 'payment_required', message: 'Insufficient API calls balance' },
  // 403
  KEY_SUSPENDED: { status: 403, error: 'Forbidden', message: 'The API key is suspended' },
  KEY_REVOKED: { status: 403, error: 'Forbidden', message: 'The API key has been revoked' },
  ORGANIZATION_SUSPENDED: { status: 403, error: 'Forbidden', message: "The API key's organisation is suspended" },
  NO_CLASSES: { status: 403, error: 'Forbidden', message: 'No classes are mapped to this API key' },
  REQUEST_FORBIDDEN: { status: 403, error: 'unauthorized', message: 'The request belongs to a different API key' },
  FORBIDDEN_ROLE: { status: 403, error: 'Forbidden', message: 'Your role in this organisation does not allow this' },
  CSRF_FAILED: { status: 403, error: 'Forbidden', message: 'Missing or wrong CSRF token (x-csrf-token header)' },
  MFA_ENROLLMENT_REQUIRED: { status: 403, error: 'Forbidden', message: 'This organisation requires two-factor authentication: set it up on your Account page first' },
  MFA_CHECK_REQUIRED: { status: 403, error: 'Forbidden', message: 'Confirm with a current authentication code first (POST /me/mfa/verify)' },
  PASSWORD_CHANGE_REQUIRED: { status: 403, error: 'Forbidden', message: 'Your password was set by an operator: choose a new one first (POST /me/password)' },
  INVALID_IMAGE_SIGNATURE: { status: 403, error: 'forbidden', message: 'The image link is invalid or has expired' },
  // 404
  REQUEST_NOT_FOUND: { status: 404, error: 'request_not_found', message: 'Request not found' },
  IMAGE_NOT_FOUND: { status: 404, error: 'not_found', message: 'Image not found' },
  NOT_FOUND: { status: 404, error: 'not_found', message: 'Not found' },
  ROUTE_NOT_FOUND: { status: 404, error: 'not_found', message: 'No such endpoint' },
  // 405
  METHOD_NOT_ALLOWED: { status: 405, error: 'Method Not Allowed', message: 'This method is not allowed on this endpoint' },
  // 410
  IMAGE_EXPIRED: { status: 410, error: 'gone', message: 'The image was removed by the retention policy; the result is still available from the lookup' },
  // 408
  PROCESSING_TIMEOUT: { status: 408, error: 'Request Timeout', message: 'Processing timed out' },
  CLIENT_TIMEOUT: { status: 408, error: 'Request Timeout', message: 'The request was not received in time' },
  // 409, 422: idempotency
  REQUEST_IN_PROGRESS: { status: 409, error: 'request_in_progress', message: 'A request with this external_id is still processing; retry later' },
  CONFLICT: { status: 409, error: 'conflict', message: 'The change conflicts with the current state' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, error: 'idempotency_key_reused', message: 'This external_id was already used with a different image' },
  // 413
  PAYLOAD_TOO_LARGE: { status: 413, error: 'Payload Too Large', message: 'The request body is too large' },
  // 429
  RATE_LIMITED: { status: 429, error: 'Too Many Requests', message: 'Rate limit exceeded' },
  MONTHLY_QUOTA_EXCEEDED: { status: 429, error: 'Too Many Requests', message: 'Monthly quota exceeded' },
  LOGIN_THROTTLED: { status: 429, error: 'Too Many Requests', message: 'Too many failed sign-ins; wait and try again' },
  PASSWORD_HASHING_BUSY: { status: 429, error: 'Too Many Requests', message: 'Too many password checks under way; retry shortly' },
  TOO_MANY_IN_FLIGHT: { status: 429, error: 'Too Many Requests', message: 'Too many requests in flight from this client address' },
  // 431
  HEADERS_TOO_LARGE: { status: 431, error: 'Request Header Fields Too Large', message: 'The request headers are too large' },
  // 500, 503
  INTERNAL_ERROR: { status: 500, error: 'Internal Server Error', message: 'Internal error' },
  SERVICE_UNAVAILABLE: { status: 503, error: 'Service Unavailable', message: 'The service is shutting down; retry on another instance' },
  IMAGE_STORE_UNAVAILABLE: { status: 503, error: 'Service Unavailable', message: 'The image store is unavailable; retry later' },
  NOT_READY: { status: 503, error: 'Service Unavailable', message: 'A dependency of the service is not ready' },
  DATABASE_UNAVAILABLE: { status: 503, error: 'Service Unavailable', message: 'The database is unavailable; retry shortly' },
  SERVICE_OVERLOADED: { status: 503, error: 'Service Unavailable', message: 'The service is at capacity; retry shortly' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  error: string;
  message: string;
  error_code: ErrorCode;
  external_id?: string;
}

/** An error that ends a request with its catalogue status and body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    /** Extra body fields the contract allows (external_id on 408). */
    readonly extra: { external_id?: string } = {},
    /** Response headers (Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    // 500 never carries a caller-supplied (possibly internal) message
    super(code === 'INTERNAL_ERROR' ? ERROR_CATALOGUE.INTERNAL_ERROR.message : (message ?? ERROR_CATALOGUE[code].message));
    this.status = ERROR_CATALOGUE[code].status;
  }

  body(): ErrorBody {
    return { error: ERROR_CATALOGUE[this.code].error, message: this.message, error_code: this.code, ...this.extra };
  }
}

/**
 * Which refusals count as which rejection reason (the telemetry plugin counts them, given
 * this table by src/app.ts). 409/422 (idempotency) and 404 are not rejections.
 */
export const REJECTION_REASONS: Partial<Record<ErrorCode, RejectionReason>> = {
  MISSING_API_KEY: 'auth',
  INVALID_API_KEY: 'auth',
  API_KEY_EXPIRED: 'auth',
  KEY_SUSPENDED: 'auth',
  KEY_REVOKED: 'auth',
  ORGANIZATION_SUSPENDED: 'auth',
  NO_CLASSES: 'auth',
  REQUEST_FORBIDDEN: 'auth',
  RATE_LIMITED: 'rate_limit',
  MONTHLY_QUOTA_EXCEEDED: 'quota',
  INSUFFICIENT_BALANCE: 'balance',
  INVALID_PARAMETERS: 'validation',
  INVALID_EXTERNAL_ID: 'validation',
  INVALID_IMAGE_URL: 'validation',
  INVALID_IMAGE_BASE64: 'validation',
  UNSUPPORTED_IMAGE_FORMAT: 'validation',
  IMAGE_TOO_LARGE: 'validation',
  MISSING_IMAGE_URLS: 'validation',
  TOO_MANY_IMAGES: 'validation',
  INVALID_REQUEST_ID: 'validation',
  INVALID_RATING: 'validation',
  PAYLOAD_TOO_LARGE: 'validation',
  // console API
  UNAUTHENTICATED: 'auth',
  INVALID_CREDENTIALS: 'auth',
  REFRESH_REUSED: 'auth',
  FORBIDDEN_ROLE: 'auth',
  CSRF_FAILED: 'auth',
  INVALID_MFA_CODE: 'auth',
  MFA_ENROLLMENT_REQUIRED: 'auth',
  MFA_CHECK_REQUIRED: 'auth',
  PASSWORD_CHANGE_REQUIRED: 'auth',
  LOGIN_THROTTLED: 'rate_limit',
  VALIDATION_FAILED: 'validation',
  // Backpressure: the decode/inference queue full, or one address over its in-flight cap.
  SERVICE_OVERLOADED: 'overload',
  TOO_MANY_IN_FLIGHT: 'overload',
  // The console's password-hashing queue full (src/console/passwords.ts).
  PASSWORD_HASHING_BUSY: 'overload',
  MALFORMED_REQUEST: 'validation',
};
