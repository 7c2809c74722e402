/**
 * The CRD's defaults, applied in code from the same schema the CRD is generated from. The
 * API server fills them in on write; the builders still call this so an object read from
 * an older CRD version (or built in a unit test) never reaches them half-filled.
 */
import { Value } from '@sinclair/typebox/value';
import { RecognitionServiceSpecSchema } from './schema.js';
import type { RecognitionService, RecognitionServiceSpec } from './types.js';

export { DEFAULT_TRITON_IMAGE } from './schema.js';

export function withDefaults(rs: RecognitionService): RecognitionService {
  // Value.Default fills in place: work on a copy, the caller's object stays as it was.
  const spec = Value.Default(RecognitionServiceSpecSchema, structuredClone(rs.spec)) as RecognitionServiceSpec;
  return { ...rs, spec };
}
