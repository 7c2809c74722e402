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

/** Wraps a failed call; the message names the server and operation, never payload bytes. */
export function toInferenceError(err: unknown, what: string): InferenceError {
  if (err instanceof InferenceError) return err;
  if (isServiceError(err)) {
    const name = Status[err.code] ?? String(err.code);
    return new InferenceError(inferenceCodeOf(err.code), `${what}: ${name}: ${err.details || err.message}`, { cause: err });
  }
  return new InferenceError('INTERNAL', `${what}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}
