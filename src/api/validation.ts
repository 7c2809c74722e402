/**
 * Request validation of the public routes: their contract schemas (src/contract) checked by
 * one Ajv instance, and each refusal named in the error catalogue by the route's table of
 * refusals. A compiled validator answers the route's ApiError itself, so the error handler
 * sends it like any other.
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, type ErrorCode } from './errors.js';

/**
 * Ajv reports the first fault it meets (allErrors would let a body of millions of bad array
 * items cost gigabytes, and run patterns over strings already too long). Nothing is coerced,
 * defaulted or removed: the handler sees the body as sent. `verbose` puts the faulty value on
 * each error, for messages that quote it. Strict, except that a `required` may name a property
 * declared elsewhere (the sync body's branches exclude each other's image that way).
 */
const ajv = new Ajv({
  allErrors: false, verbose: true, coerceTypes: false, useDefaults: false, removeAdditional: false, strict: true, strictTypes: false, strictRequired: false,
});

/** One refusal: which fault it answers (where, which keyword, which value) and with which code and message. */
export interface Refusal {
  /** The property, as a JSON pointer with array indices as `*` (`/image_urls/*`); '' for the whole body. */
  at: string;
  /** The schema keywords it answers (any when absent); a missing property is `required` at its own pointer. */
  keywords?: string[];
  /** Narrows it by the faulty value (null is not the same fault as a string). */
  when?: (value: unknown) => boolean;
  code: ErrorCode;
  /** The catalogue's message when absent. */
  message?: string | ((value: unknown) => string);
}

/** Where a fault is: a missing property is at its own pointer, array indices are `*`. */
function pointerOf(e: ErrorObject): string {
  const path = e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*');
  return e.keyword === 'required' ? `${path}/${(e.params as { missingProperty: string }).missingProperty}` : path;
}

/**
 * The faults the client meant. A failed oneOf reports every branch's fault; a branch refused as
 * a whole (a property missing or excluded) is not the one the client chose, a branch refused
 * inside one of its properties is. With exactly one such branch its fault is the answer;
 * otherwise the oneOf's own ("exactly one of").
 */
function meant(errors: ErrorObject[]): ErrorObject[] {
  const oneOf = errors.find((e) => e.keyword === 'oneOf');
  if (oneOf === undefined) return errors;
  const branch = `${oneOf.schemaPath}/`;
  const chosen = errors.filter((e) => e.schemaPath.startsWith(branch) && e.instancePath !== oneOf.instancePath);
  return new Set(chosen.map((e) => e.schemaPath.slice(branch.length).split('/')[0])).size === 1 ? chosen : [oneOf];
}

/** The route's ApiError for what Ajv found: the first refusal of the table that answers a fault. */
function refusalOf(refusals: Refusal[], errors: ErrorObject[]): ApiError {
  for (const e of meant(errors)) {
    const at = pointerOf(e);
    const r = refusals.find((x) => x.at === at && (x.keywords?.includes(e.keyword) ?? true) && (x.when?.(e.data) ?? true));
    if (r !== undefined) return new ApiError(r.code, typeof r.message === 'function' ? r.message(e.data) : r.message);
  }
  // A fault no refusal names is a gap in the table; still a client error, in Ajv's words.
  const [first] = errors;
  return new ApiError('INVALID_PARAMETERS', first ? `${first.instancePath || 'body'} ${first.message ?? 'is invalid'}` : undefined);
}

/**
 * The faults of a body, in the contract's order. Ajv checks a oneOf before the object's own
 * keywords (its type, required and properties); the contract reads it after them. So when the
 * body's oneOf fails, the rest of the schema is asked first.
 */
function faultsOf(schema: object): (data: unknown) => ErrorObject[] | null {
  const validate = ajv.compile(schema);
  const { oneOf, ...rest } = schema as { oneOf?: unknown };
  const withoutOneOf = oneOf === undefined ? null : ajv.compile(rest);
  return (data) => {
    if (validate(data)) return null;
    const errors = validate.errors ?? [];
    if (withoutOneOf !== null && errors.some((e) => e.keyword === 'oneOf' && e.instancePath === '') && !withoutOneOf(data)) return withoutOneOf.errors ?? [];
    return errors;
  };
}

/** A route's validatorCompiler: its contract schemas, refused as its table says. */
export function contractValidator(refusals: Refusal[]): FastifySchemaCompiler<unknown> {
  return ({ schema }) => {
    const faults = faultsOf(schema as object);
    return (data: unknown) => {
      const errors = faults(data);
      return errors === null ? { value: data } : { error: refusalOf(refusals, errors) };
    };
  };
}
