/**
 * The only retry the Triton client does: a call that gRPC guarantees never left this
 * process. Inference is not retried once it may have reached the model: it could run
 * twice, and a retry would eat into a request budget the caller is already counting.
 *
 * "Never left this process" is decided precisely, not guessed from UNAVAILABLE alone:
 * @grpc/grpc-js fails a call with UNAVAILABLE and the details "No connection established"
 * (prefixed with the load-balancing policy name for some policies) when its picker has
 * no READY connection to give the call, i.e. before any byte of the request is written.
 * Every other UNAVAILABLE ("Connection dropped", a GOAWAY, a server answering UNAVAILABLE)
 * may come after the server read the request, so it is reported, not retried.
 * (grpc-js itself also retries, transparently and once, streams refused by HTTP/2 before
 * the server saw them; that is below this layer.)
 */
import { status as Status } from '@grpc/grpc-js';
import type { RetryOptions } from '../../backoff.js';
import { isServiceError } from './status-map.js';

export function neverSent(err: unknown): boolean {
  return isServiceError(err) && err.code === Status.UNAVAILABLE && /(^|: )No connection established/.test(err.details ?? '');
}

/** The client's retry: at once (the wait for a connection is the call's own), up to 3 tries in all. */
export const UNSENT_RETRY: RetryOptions = { retryable: neverSent, maxAttempts: 3, baseMs: 0, capMs: 0 };
