export { RecognitionClient, type RecognitionClientOptions, type RecognizeInput, type ImageInput, type CallOptions, type BatchOptions, type DetectionControls } from './recognition-client.js';
export {
  ConsoleClient,
  MemoryTokenStore,
  NotLoggedInError,
  MfaRequiredError,
  type MfaCodeProvider,
  type ConsoleClientOptions,
  type TokenStore,
  type Tokens,
  type ApiKey,
  type NewKey,
  type KeyChanges,
  type KeyStatus,
  type Membership,
  type Role,
  type Usage,
  type UsageDay,
  type User,
} from './console-client.js';
export { ApiError, RedirectError, TransportError, parseRetryAfter } from './errors.js';
export { InsecureBaseUrlError, checkBaseUrl, isLoopbackHost } from './base-url.js';
export { normalizeResult, normalizeBatch, normalizeDetection, normalizeFeedback, UnexpectedResponseError } from './normalize.js';
export type { RetryMode, TransportOptions } from './transport.js';
export type * from './types.js';
