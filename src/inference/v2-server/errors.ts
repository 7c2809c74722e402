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
        return 413; // only a request above the size limit
      case Status.UNIMPLEMENTED:
        return 501;
      default:
        return 500;
    }
  }
}

export const notFound = (m: string): V2Error => new V2Error(Status.NOT_FOUND, m);
export const invalid = (m: string): V2Error => new V2Error(Status.INVALID_ARGUMENT, m);
export const unavailable = (m: string): V2Error => new V2Error(Status.UNAVAILABLE, m);

// Triton's own wording for the model lookups (clients and tests match on it).
export const unknownModel = (name: string): V2Error => notFound(`Request for unknown model: '${name}' is not found`);
/** A repository model that is not loaded (unloaded, or failed to load). */
export const noAvailableVersions = (name: string): V2Error => notFound(`Request for unknown model: '${name}' has no available versions`);
export const unknownVersion = (name: string, version: string): V2Error => notFound(`Request for unknown model: '${name}' version ${version} is not found`);
/** The prefix Triton puts on request validation errors. */
export const requestIdPrefix = (id: string | undefined): string => `[request id: ${id || '<id_unknown>'}] `;
