/**
 * The error bodies of the routes' responses, and the public contract's schemas re-exported.
 * Responses are serialised through their schemas, so a field not declared there never
 * leaves the service.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { RESULT_SCHEMAS } from '../contract/public-api.js';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';

// The public API's schemas live in the contract (src/contract/public-api.ts), which every room may import.
export * from '../contract/public-api.js';

/** The error body of one status, listing exactly the codes (and error values) a route can answer with. */
export function errorBody(codes: ErrorCode[], withExternalId = false): TSchema {
  const errors = [...new Set(codes.map((c) => ERROR_CATALOGUE[c].error))];
  return Type.Object(
    {
      error: Type.String({ enum: errors }),
      message: Type.String(),
      error_code: Type.String({ enum: codes }),
      ...(withExternalId ? { external_id: Type.Optional(Type.String()) } : {}),
    },
    { description: codes.map((c) => `${c}: ${ERROR_CATALOGUE[c].message}`).join('; ') },
  );
}

/** Response schemas of a route: the success schema plus one error body per status its codes use. */
export function responses(success: Record<number, TSchema>, codes: ErrorCode[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = { ...success };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = ERROR_CATALOGUE[c].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) out[status] = errorBody(list, status === 408);
  return out;
}

export const sharedSchemas = RESULT_SCHEMAS;
