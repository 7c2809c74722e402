/**
 * JSON schemas of every body and response (TypeBox). Responses are serialised through
 * them, so a field not declared here never leaves the service.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';

export const MAX_BATCH_IMAGES = 10;
export const MAX_IMAGE_URL_LENGTH = 2048;
// C0, DEL and C1 controls.
export const EXTERNAL_ID_PATTERN = '^[^\\u0000-\\u001F\\u007F-\\u009F]+$';
/** A UUID exactly (ajv's `uuid` format also takes a `urn:uuid:` prefix, which PostgreSQL refuses). */
const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const EXTERNAL_ID_RULE = '1 to 255 characters, no control characters, no lone UTF-16 surrogates (400 INVALID_EXTERNAL_ID).';
const externalIdInput = (description: string) => Type.String({ minLength: 1, maxLength: 255, pattern: EXTERNAL_ID_PATTERN, description: `${description}: ${EXTERNAL_ID_RULE}` });

export const ExternalId = externalIdInput('Client-provided identifier');

export const BoundingBox = Type.Object(
  {
    x: Type.Integer({ description: 'X of the top-left corner, pixels of the original image.' }),
    y: Type.Integer({ description: 'Y of the top-left corner.' }),
    width: Type.Integer(),
    height: Type.Integer(),
  },
  { $id: 'BoundingBox', title: 'BoundingBox' },
);

export const Detection = Type.Object(
  {
    label: Type.String({ description: 'Detected product label.' }),
    external_id: Type.String({ description: 'External id of the detected product (model catalog).' }),
    bounding_box: Type.Ref(BoundingBox),
    confidence: Type.Number({ minimum: 0, maximum: 1, description: 'Extension: detection score.' }),
  },
  { $id: 'Detection', title: 'Detection' },
);

export const RequestStatus = Type.Union([Type.Literal('QUEUED'), Type.Literal('PROCESSING'), Type.Literal('DONE'), Type.Literal('ERROR')]);

export const CVResult = Type.Object(
  {
    success: Type.Boolean({ description: 'True exactly when status is DONE.' }),
    request_id: Type.String({ format: 'uuid' }),
    external_id: Type.String({
      description:
        'Echo of the client-provided id: the sync request\'s external_id, or for a batch image its batch\'s id (the batch external_id, ' +
        'or the batch_id the service assigned when none was sent). Empty only for batch images stored before batches were given an id.',
    }),
    status: RequestStatus,
    // No `format: uri`: when the image could not be fetched this echoes the submitted string.
    image_url: Type.String({ description: 'Signed, expiring address of the stored image: the API link, or a presigned S3 URL with IMAGE_URL_MODE=presigned (or the submitted URL, as sent, when it could not be fetched).' }),
    results: Type.Array(Type.Ref(Detection), { description: 'Empty unless DONE.' }),
    error: Type.Optional(Type.String({ description: 'Set when status is ERROR.' })),
    response_code: Type.Optional(Type.Integer({ description: 'HTTP status of the recognition step (200 when DONE; upstream status of a failed download; 408 on timeout).' })),
    processing_time_ms: Type.Optional(Type.Integer({ description: 'Extension.' })),
    model: Type.Optional(Type.Object({ name: Type.String(), version: Type.String() }, { description: 'Extension: the model that produced the results.' })),
  },
  { $id: 'CVResult', title: 'CVResult' },
);

export const BatchImageResult = Type.Object(
  {
    image_url: Type.String({ description: 'The URL as submitted.' }),
    request_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Null if the image failed before processing.' }),
    status: Type.Union([Type.Literal('DONE'), Type.Literal('FAILED')]),
    success: Type.Boolean(),
    error: Type.Union([Type.String(), Type.Null()]),
    results: Type.Array(Type.Ref(Detection)),
    response_code: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'BatchImageResult', title: 'BatchImageResult' },
);

export const BatchCVResult = Type.Object(
  {
    success: Type.Boolean(),
    batch_id: Type.String({
      description:
        'The batch\'s external_id as sent; when none was sent, an id the service assigned (a UUID). ' +
        'Each image\'s request carries it as its external_id.',
    }),
    total_images: Type.Integer(),
    results: Type.Array(Type.Ref(BatchImageResult)),
  },
  { $id: 'BatchCVResult', title: 'BatchCVResult' },
);

export const FeedbackResult = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    request_id: Type.String({ pattern: UUID_PATTERN }),
    rating: Type.Integer({ enum: [-1, 0, 1] }),
  },
  { $id: 'FeedbackResult', title: 'FeedbackResult' },
);

const ImageUrlInput = Type.String({ maxLength: MAX_IMAGE_URL_LENGTH, description: 'Public http(s) URL of the image (any string is accepted here; a URL that is not public http(s) is 400 INVALID_IMAGE_URL).' });
// minLength 1: an empty string is refused (400 INVALID_IMAGE_BASE64, "contains no data"), so the document says so.
const ImageBase64Input = Type.String({
  minLength: 1,
  description:
    'Base64 image (JPEG, PNG, WebP, GIF), optionally with a data:<mime>;base64, prefix; at most 10 MB encoded. ' +
    'Standard alphabet (RFC 4648), whitespace allowed; empty data, or data that is not base64, is 400 INVALID_IMAGE_BASE64.',
});

/** Exactly one of image_url and image_base64: a body with both matches both branches, so oneOf refuses it. */
export const SyncBody = Type.Unsafe<{ external_id: string; image_url?: string; image_base64?: string }>({
  title: 'SyncRequest',
  type: 'object',
  oneOf: [
    Type.Object({ external_id: ExternalId, image_url: ImageUrlInput }, { title: 'SyncRequestByUrl' }),
    Type.Object({ external_id: ExternalId, image_base64: ImageBase64Input }, { title: 'SyncRequestByBase64' }),
  ],
});

export const BatchBody = Type.Object(
  {
    image_urls: Type.Array(Type.String({ description: 'http(s) URL' }), { minItems: 1, maxItems: MAX_BATCH_IMAGES }),
    external_id: Type.Optional(externalIdInput('Tracking id of the batch, not idempotent, returned as batch_id (without it the service assigns one)')),
  },
  { title: 'BatchRequest' },
);

export const FeedbackBody = Type.Object(
  {
    request_id: Type.String({ pattern: UUID_PATTERN }),
    rating: Type.Integer({ enum: [-1, 0, 1], description: '-1 bad, 0 neutral, 1 good' }),
  },
  { title: 'FeedbackRequest' },
);

export const RequestIdParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN, description: 'The request id returned by a submission.' }) });

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

export const sharedSchemas = [BoundingBox, Detection, CVResult, BatchImageResult, BatchCVResult, FeedbackResult];
