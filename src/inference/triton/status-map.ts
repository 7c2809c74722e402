/**
 * gRPC statuses → InferenceError, at the boundary of the Triton adapter, so nothing above
 * it knows about gRPC. Codes follow https://grpc.github.io/grpc/core/md_doc_statuscodes.html.
 */
import { status as Status, type ServiceError } from '@grpc/grpc-js';
import { InferenceError, type InferenceErrorCode } from '../backend.js';

const CODE_MAP: Partial<Record<Status, InferenceErrorCode>> = {
  [Status.UNAVAILABLE]: 'UNAVAILABLE',
  [Status.DEADLINE_EXCEEDED]: 'DEADLINE_EXCEEDED',
  [Status.NOT_FOUND]: 'MODEL_NOT_READY',
  [Status.FAILED_PRECONDITION]: 'MODEL_NOT_READY',
  [Status.INVALID_ARGUMENT]: 'INVALID_INPUT',
  [Status.OUT_OF_RANGE]: 'INVALID_INPUT',
  [Status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [Status.CANCELLED]: 'CANCELLED',
};

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number' && 'details' in err;
}

/** The InferenceError code a gRPC status maps to (INTERNAL for anything unexpected). */
export function inferenceCodeOf(code: Status): InferenceErrorCode {
  return CODE_MAP[code] ?? 'INTERNAL';
}

/**
 * The details of a status without the server's network address or grpc-js timing notes:
 * the message ends up in CVResult.error, which API clients read. The full error stays in
 * `cause` for the logs.
 */
export function publicDetails(details: string): string {
  return details
    .replace(/,?\s*(remote_addr|metadata filters|LB pick|name resolution|waiting for metadata filters)[=:][^,]*/g, '')
    .replace(/\[[0-9a-fA-F:.]+\](:\d+)?|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, '<server>')
    .trim();
}

/** Wraps a failed call; the message names the operation and the status, never the payload. */
export function toInferenceError(err: unknown, what: string): InferenceError {
  if (err instanceof InferenceError) return err;
  if (isServiceError(err)) {
    const name = Status[err.code] ?? String(err.code);
    return new InferenceError(inferenceCodeOf(err.code), `${what}: ${name}: ${publicDetails(err.details || err.message)}`, { cause: err });
  }
  return new InferenceError('INTERNAL', `${what}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}
