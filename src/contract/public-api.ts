/**
 * The public API's wire contract: every request and result of /v1/cv, as TypeBox schemas,
 * with the TypeScript type of each beside it (`Static<>`). The routes validate requests
 * with these schemas, serialise results through them and publish them in /openapi.json; the
 * use case builds its results as these types. A leaf module: it imports only TypeBox, so
 * every room may import it.
 */
import { Type, type Static } from '@sinclair/typebox';

export const MAX_BATCH_IMAGES = 10;
export const MAX_IMAGE_URL_LENGTH = 2048;
export const MAX_EXTERNAL_ID_LENGTH = 255;
export const MAX_RESULTS_LIMIT = 100;
export const MAX_REQUESTED_CLASSES = 100;
export const MAX_CLASS_LENGTH = 100;

// Patterns are ECMAScript regular expressions. A lone UTF-16 surrogate cannot be stored (PostgreSQL
// text would turn it into U+FFFD, and two ids would collide): a character is anything but a
// surrogate, or a high surrogate followed by a low one. Read with the `u` flag (as ajv does) the
// second branch never applies, since a pair is then one character; without it, it is what lets
// a pair (an emoji) through. Either way only lone surrogates are refused.
const CHAR = (excluded: string) => `(?:[^${excluded}\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])`;
/** No C0, DEL or C1 control characters and no lone surrogates. */
export const EXTERNAL_ID_PATTERN = `^${CHAR('\\u0000-\\u001F\\u007F-\\u009F')}+$`;
/** No lone surrogates (the fetcher's policy refuses control characters, with its own message). */
export const IMAGE_URL_PATTERN = `^${CHAR('')}*$`;
/** A UUID exactly (ajv's `uuid` format also takes a `urn:uuid:` prefix, which PostgreSQL refuses). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const EXTERNAL_ID_RULE = `1 to ${MAX_EXTERNAL_ID_LENGTH} characters (Unicode code points), no control characters, no lone UTF-16 surrogates (400 INVALID_EXTERNAL_ID).`;
const externalIdInput = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_EXTERNAL_ID_LENGTH, pattern: EXTERNAL_ID_PATTERN, description: `${description}: ${EXTERNAL_ID_RULE}` });

export const ExternalId = externalIdInput('Client-provided identifier');

// Results

export const BoundingBox = Type.Object(
  {
    x: Type.Integer({ description: 'X of the top-left corner, pixels of the original image.' }),
    y: Type.Integer({ description: 'Y of the top-left corner.' }),
    width: Type.Integer(),
    height: Type.Integer(),
  },
  { $id: 'BoundingBox', title: 'BoundingBox' },
);
export type BoundingBox = Static<typeof BoundingBox>;

export const Detection = Type.Object(
  {
    label: Type.String({ description: 'Detected product label.' }),
    external_id: Type.String({ description: 'External id of the detected product (model catalog).' }),
    bounding_box: Type.Ref(BoundingBox),
    confidence: Type.Number({ minimum: 0, maximum: 1, description: 'Extension: detection score.' }),
  },
  { $id: 'Detection', title: 'Detection' },
);
export type Detection = Static<typeof Detection>;

export const RequestStatus = Type.Union([Type.Literal('QUEUED'), Type.Literal('PROCESSING'), Type.Literal('DONE'), Type.Literal('ERROR')]);
export type RequestStatus = Static<typeof RequestStatus>;

export const ModelRef = Type.Object({ name: Type.String(), version: Type.String() }, { description: 'Extension: the model that produced the results.' });
export type ModelRef = Static<typeof ModelRef>;

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
    model: Type.Optional(ModelRef),
  },
  { $id: 'CVResult', title: 'CVResult' },
);
export type CVResult = Static<typeof CVResult>;

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
export type BatchImageResult = Static<typeof BatchImageResult>;

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
export type BatchCVResult = Static<typeof BatchCVResult>;

/** -1 bad, 0 neutral, 1 good: an integer enum in the document, the literal union in TypeScript. */
const rating = (description?: string) => Type.Unsafe<-1 | 0 | 1>(Type.Integer({ enum: [-1, 0, 1], description }));
export type Rating = -1 | 0 | 1;

export const FeedbackResult = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    request_id: Type.String({ pattern: UUID_PATTERN }),
    rating: rating(),
  },
  { $id: 'FeedbackResult', title: 'FeedbackResult' },
);
export type FeedbackResult = Static<typeof FeedbackResult>;

// Requests. Every rule the service refuses a body by, before it looks at the image itself, is
// stated here; what only the image can tell (a URL's address, the bytes) is in the descriptions.

const ImageUrlInput = Type.String({
  maxLength: MAX_IMAGE_URL_LENGTH,
  pattern: IMAGE_URL_PATTERN,
  description:
    `URL of the image: at most ${MAX_IMAGE_URL_LENGTH} characters (Unicode code points), no lone UTF-16 surrogates (400 INVALID_IMAGE_URL). Any such string passes this schema; ` +
    'one that is not an absolute http(s) URL of a public address (no credentials, no control characters, a host that resolves ' +
    'to a public address) is 400 INVALID_IMAGE_URL.',
});
// minLength 1: an empty string is refused (400 INVALID_IMAGE_BASE64, "contains no data"), so the document says so.
const ImageBase64Input = Type.String({
  minLength: 1,
  description:
    'Base64 image (JPEG, PNG, WebP, GIF), optionally with a data:<mime>;base64, prefix; at most 10 MB encoded (400 IMAGE_TOO_LARGE). ' +
    'Standard alphabet (RFC 4648), whitespace allowed; empty data, or data that is not base64, is 400 INVALID_IMAGE_BASE64.',
});

/**
 * Per-request detection controls, on the sync body and the batch body (each batch image).
 * They shape the result before it is stored, so a lookup returns what the client got.
 */
const DETECTION_CONTROLS = {
  min_confidence: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'Only detections with confidence >= this, 0 to 1 (400 INVALID_PARAMETERS). The detector already drops boxes under the ' +
        "service's score threshold (SCORE_THRESHOLD, or a class's own threshold in the model catalog), so a lower value returns what the default returns.",
    }),
  ),
  max_results: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_RESULTS_LIMIT,
      description: `At most this many detections, 1 to ${MAX_RESULTS_LIMIT} (400 INVALID_PARAMETERS): the highest confidence first, ties in the detector's order.`,
    }),
  ),
  classes: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: MAX_CLASS_LENGTH }), {
      minItems: 1,
      maxItems: MAX_REQUESTED_CLASSES,
      uniqueItems: true,
      description:
        `Only detections of these labels: 1 to ${MAX_REQUESTED_CLASSES} unique, non-empty labels of at most ${MAX_CLASS_LENGTH} characters (400 INVALID_PARAMETERS). ` +
        "It narrows the API key's classes, never widens them: a label the key may not see, or (for a key with all classes) one not in the model catalog, is 400 INVALID_PARAMETERS naming it.",
    }),
  ),
};

/** The controls as the body carries them. */
export interface DetectionControlsBody {
  min_confidence?: number;
  max_results?: number;
  classes?: string[];
}

/**
 * external_id and exactly one of image_url and image_base64. Each branch also refuses the other
 * image, so a body with both is refused whatever their values.
 */
export const SyncBody = Type.Unsafe<{ external_id: string } & DetectionControlsBody & ({ image_url: string; image_base64?: undefined } | { image_base64: string; image_url?: undefined })>({
  title: 'SyncRequest',
  type: 'object',
  required: ['external_id'],
  description:
    'A replay (the same API key, external_id and image as an earlier DONE request) answers the stored result whatever ' +
    "this request's min_confidence, max_results and classes: the idempotency fingerprint is the image's alone.",
  properties: { external_id: ExternalId, ...DETECTION_CONTROLS },
  oneOf: [
    Type.Object({ image_url: ImageUrlInput }, { title: 'SyncRequestByUrl', not: { required: ['image_base64'] } }),
    Type.Object({ image_base64: ImageBase64Input }, { title: 'SyncRequestByBase64', not: { required: ['image_url'] } }),
  ],
});
export type SyncBody = Static<typeof SyncBody>;

export const BatchBody = Type.Object(
  {
    image_urls: Type.Array(
      Type.String({
        description:
          'URL of an image. Any string passes this schema: one the service cannot fetch (not a public http(s) URL, over ' +
          `${MAX_IMAGE_URL_LENGTH} characters, with control characters or lone surrogates) is that image's FAILED entry, not a refusal of the batch.`,
      }),
      { minItems: 1, maxItems: MAX_BATCH_IMAGES },
    ),
    external_id: Type.Optional(externalIdInput('Tracking id of the batch, not idempotent, returned as batch_id (without it the service assigns one)')),
    ...DETECTION_CONTROLS,
  },
  { title: 'BatchRequest' },
);
export type BatchBody = Static<typeof BatchBody>;

export const FeedbackBody = Type.Object(
  {
    request_id: Type.String({ pattern: UUID_PATTERN }),
    rating: rating('-1 bad, 0 neutral, 1 good'),
  },
  { title: 'FeedbackRequest' },
);
export type FeedbackBody = Static<typeof FeedbackBody>;

export const RequestIdParams = Type.Object({ id: Type.String({ pattern: UUID_PATTERN, description: 'The request id returned by a submission.' }) });
export type RequestIdParams = Static<typeof RequestIdParams>;

/** The result schemas the others refer to by $id: registered once on the app, listed in the document's components. */
export const RESULT_SCHEMAS = [BoundingBox, Detection, CVResult, BatchImageResult, BatchCVResult, FeedbackResult];
