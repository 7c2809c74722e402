/** An error the v2 server answers with a specific gRPC status (and HTTP status on /v2). */
import { status as Status } from '@grpc/grpc-js';

export class V2Error extends Error {
  override readonly name = 'V2Error';
  constructor(
    readonly code: Status,
    message: string,
  ) {
    super(message);
  }

  get httpStatus(): number {
    switch (this.code) {
      case Status.NOT_FOUND:
        return 404;
      case Status.INVALID_ARGUMENT:
        return 400;
      case Status.UNAVAILABLE:
        return 503;
      case Status.RESOURCE_EXHAUSTED:
        return 429;
      default:
        return 500;
    }
  }
}

export const notFound = (m: string): V2Error => new V2Error(Status.NOT_FOUND, m);
export const invalid = (m: string): V2Error => new V2Error(Status.INVALID_ARGUMENT, m);
export const unavailable = (m: string): V2Error => new V2Error(Status.UNAVAILABLE, m);
