/** The four public operations: a handler calls the use case and maps its outcome to HTTP. */
import type { FastifyPluginAsync } from 'fastify';
import type { RecognitionService } from '../../recognition/service.js';
import { callerOf, guard, type AuthOptions } from '../auth.js';
import { ApiError, type ErrorCode } from '../errors.js';
import {
  BatchBody, BatchCVResult, CVResult, FeedbackBody, FeedbackResult, MAX_BATCH_IMAGES, MAX_CLASS_LENGTH, MAX_EXTERNAL_ID_LENGTH, MAX_REQUESTED_CLASSES,
  MAX_RESULTS_LIMIT, RequestIdParams, SyncBody, type DetectionControlsBody,
} from '../../contract/public-api.js';
import { responses } from '../schemas.js';
import { contractValidator, type Refusal } from '../validation.js';
import { Type } from '@sinclair/typebox';

export const TAG = 'Computer Vision';

const AUTH_CODES: ErrorCode[] = ['MISSING_API_KEY', 'INVALID_API_KEY', 'API_KEY_EXPIRED', 'KEY_SUSPENDED', 'KEY_REVOKED', 'ORGANIZATION_SUSPENDED'];
const COMMON: ErrorCode[] = [...AUTH_CODES, 'RATE_LIMITED', 'TOO_MANY_IN_FLIGHT', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE'];

/** Every error code each operation can answer with; drives its OpenAPI responses. */
export const OPERATION_ERRORS = {
  createSyncCvRequest: [
    ...COMMON, 'NO_CLASSES', 'INVALID_PARAMETERS', 'INVALID_EXTERNAL_ID', 'INVALID_IMAGE_URL', 'INVALID_IMAGE_BASE64',
    'UNSUPPORTED_IMAGE_FORMAT', 'IMAGE_TOO_LARGE', 'INSUFFICIENT_BALANCE', 'PROCESSING_TIMEOUT', 'REQUEST_IN_PROGRESS',
    'IDEMPOTENCY_KEY_REUSED', 'PAYLOAD_TOO_LARGE', 'MONTHLY_QUOTA_EXCEEDED', 'SERVICE_OVERLOADED',
  ],
  createBatchCvRequest: [
    ...COMMON, 'NO_CLASSES', 'INVALID_PARAMETERS', 'INVALID_EXTERNAL_ID', 'MISSING_IMAGE_URLS', 'TOO_MANY_IMAGES',
    'INSUFFICIENT_BALANCE', 'PAYLOAD_TOO_LARGE', 'MONTHLY_QUOTA_EXCEEDED',
  ],
  getRequest: [...COMMON, 'INVALID_REQUEST_ID', 'REQUEST_FORBIDDEN', 'REQUEST_NOT_FOUND'],
  submitFeedback: [...COMMON, 'INVALID_PARAMETERS', 'INVALID_REQUEST_ID', 'INVALID_RATING', 'REQUEST_NOT_FOUND', 'PAYLOAD_TOO_LARGE'],
} satisfies Record<string, ErrorCode[]>;

const security = [{ apiKey: [] }];

const EXTERNAL_ID: Refusal = {
  at: '/external_id',
  code: 'INVALID_EXTERNAL_ID',
  message: `external_id must be 1 to ${MAX_EXTERNAL_ID_LENGTH} characters, without control characters or lone UTF-16 surrogates`,
};
/** The detection controls' faults, the same on sync and batch. */
const CONTROLS: Refusal[] = [
  { at: '/min_confidence', code: 'INVALID_PARAMETERS', message: 'min_confidence must be a number from 0 to 1' },
  { at: '/max_results', code: 'INVALID_PARAMETERS', message: `max_results must be an integer from 1 to ${MAX_RESULTS_LIMIT}` },
  { at: '/classes', keywords: ['uniqueItems'], code: 'INVALID_PARAMETERS', message: 'classes must not repeat a label' },
  { at: '/classes', code: 'INVALID_PARAMETERS', message: `classes must be an array of 1 to ${MAX_REQUESTED_CLASSES} labels` },
  { at: '/classes/*', code: 'INVALID_PARAMETERS', message: `each of classes must be a label of 1 to ${MAX_CLASS_LENGTH} characters` },
];
const MISSING_REQUEST_ID = 'The request id is missing';
const isNull = (v: unknown) => v === null;

/**
 * How each operation refuses what its schema does not allow: the catalogue code and message
 * for each fault, as the contract has always answered them. Fastify validates an absent body as
 * null, and the error handler answers an empty JSON body as the schema answers an absent one.
 */
const REFUSALS = {
  sync: [
    { at: '', keywords: ['type'], code: 'INVALID_PARAMETERS', message: 'The body must be a JSON object with external_id and image_url or image_base64' },
    { at: '/external_id', keywords: ['required'], code: 'INVALID_PARAMETERS', message: 'external_id is required' },
    EXTERNAL_ID,
    { at: '', keywords: ['oneOf'], code: 'INVALID_PARAMETERS', message: 'Exactly one of image_url and image_base64 is required' },
    { at: '/image_url', keywords: ['type'], code: 'INVALID_PARAMETERS', message: 'image_url must be a string' },
    { at: '/image_url', code: 'INVALID_IMAGE_URL' },
    { at: '/image_base64', keywords: ['type'], code: 'INVALID_PARAMETERS', message: 'image_base64 must be a string' },
    // The same words as the decoder's for an empty payload after a data: prefix.
    { at: '/image_base64', code: 'INVALID_IMAGE_BASE64', message: 'image_base64 contains no data' },
    ...CONTROLS,
  ],
  batch: [
    { at: '', when: isNull, code: 'MISSING_IMAGE_URLS', message: `image_urls is required: send 1 to ${MAX_BATCH_IMAGES} image URLs` },
    { at: '', code: 'INVALID_PARAMETERS', message: 'The body must be a JSON object with image_urls' },
    { at: '/image_urls', keywords: ['required', 'minItems'], code: 'MISSING_IMAGE_URLS', message: 'image_urls is required and must not be empty' },
    { at: '/image_urls', when: isNull, code: 'MISSING_IMAGE_URLS', message: 'image_urls is required and must not be empty' },
    { at: '/image_urls', keywords: ['type'], code: 'INVALID_PARAMETERS', message: 'image_urls must be an array of URLs' },
    {
      at: '/image_urls',
      keywords: ['maxItems'],
      code: 'TOO_MANY_IMAGES',
      message: (urls) => `Too many images: the maximum is ${MAX_BATCH_IMAGES} per batch, received ${(urls as unknown[]).length}`,
    },
    { at: '/image_urls/*', code: 'INVALID_PARAMETERS', message: 'image_urls must contain only strings' },
    EXTERNAL_ID,
    ...CONTROLS,
  ],
  lookup: [
    { at: '/id', when: (id) => id === '', code: 'INVALID_REQUEST_ID', message: MISSING_REQUEST_ID },
    { at: '/id', code: 'INVALID_REQUEST_ID', message: 'The request id must be a UUID' },
  ],
  feedback: [
    { at: '', code: 'INVALID_PARAMETERS', message: 'The body must be a JSON object with request_id and rating' },
    { at: '/request_id', keywords: ['required'], code: 'INVALID_REQUEST_ID', message: 'request_id is required' },
    { at: '/request_id', code: 'INVALID_REQUEST_ID', message: 'request_id must be a UUID' },
    { at: '/rating', code: 'INVALID_RATING', message: 'Invalid rating: the rating must be -1 (bad), 0 (neutral) or 1 (good)' },
  ],
} satisfies Record<string, Refusal[]>;

/** The use case's detection controls, from the body's optional fields. */
function controlsOf(body: DetectionControlsBody) {
  return { minConfidence: body.min_confidence, maxResults: body.max_results, classes: body.classes };
}

/** The use case's input: the image as the one field the contract let through. */
function syncInput(body: SyncBody) {
  const image = body.image_url !== undefined ? { url: body.image_url } : { base64: body.image_base64 };
  return { externalId: body.external_id, image, controls: controlsOf(body) };
}

export interface RecognitionRoutesOptions {
  service: RecognitionService;
  auth: AuthOptions;
}

// Request types are the contract's Static types, given per route: the TypeBox type provider
// expects the newer `typebox` package, not the @sinclair/typebox these schemas are built with.
export const recognitionRoutes: FastifyPluginAsync<RecognitionRoutesOptions> = async (app, opts) => {
  const { service } = opts;
  const recognitionGuard = guard(opts.auth, 'recognition');
  const lookupGuard = guard(opts.auth, 'lookup');

  app.post<{ Body: SyncBody }>(
    '/v1/cv/requests/sync',
    {
      onRequest: recognitionGuard,
      validatorCompiler: contractValidator(REFUSALS.sync),
      schema: {
        operationId: 'createSyncCvRequest',
        summary: 'Recognise objects in one image, synchronously',
        description:
          'Idempotent on (API key, external_id): a repeat with the same image replays the stored result ' +
          '(header Idempotent-Replayed: true, no quota or balance use); while the first is processing: 409; ' +
          'with a different image: 422; after an ERROR the image is processed again as a new request. ' +
          'A replay answers the stored result whatever its own min_confidence, max_results and classes.',
        tags: [TAG],
        security,
        body: SyncBody,
        response: responses({ 200: Type.Ref(CVResult) }, OPERATION_ERRORS.createSyncCvRequest),
      },
    },
    async (request, reply) => {
      const { result, replayed } = await service.submitSync(callerOf(request), syncInput(request.body), request.arrivedAt);
      if (replayed) void reply.header('Idempotent-Replayed', 'true');
      return result;
    },
  );

  app.post<{ Body: BatchBody }>(
    '/v1/cv/requests/batch',
    {
      onRequest: recognitionGuard,
      validatorCompiler: contractValidator(REFUSALS.batch),
      schema: {
        operationId: 'createBatchCvRequest',
        summary: 'Recognise objects in 1 to 10 images by URL, concurrently',
        description:
          'Each image becomes its own request. One image failing never fails the batch: its entry is FAILED. ' +
          'min_confidence, max_results and classes apply to every image.',
        tags: [TAG],
        security,
        body: BatchBody,
        response: responses({ 200: Type.Ref(BatchCVResult) }, OPERATION_ERRORS.createBatchCvRequest),
      },
    },
    async (request) => {
      const { image_urls: urls, external_id: externalId = null } = request.body;
      return service.submitBatch(callerOf(request), { urls, externalId, controls: controlsOf(request.body) }, request.arrivedAt);
    },
  );

  // A lookup without an id is the contract's 400 missing_request_id, not a 404 route miss.
  for (const url of ['/v1/cv/requests', '/v1/cv/requests/']) {
    app.get(url, { onRequest: lookupGuard, schema: { hide: true } }, async () => {
      throw new ApiError('INVALID_REQUEST_ID', MISSING_REQUEST_ID);
    });
  }

  app.get<{ Params: RequestIdParams }>(
    '/v1/cv/requests/:id',
    {
      onRequest: lookupGuard,
      validatorCompiler: contractValidator(REFUSALS.lookup),
      schema: {
        operationId: 'getRequest',
        summary: 'Status and result of an earlier request',
        description: 'Only the API key that made the request may read it (another key: 403).',
        tags: [TAG],
        security,
        params: RequestIdParams,
        response: responses({ 200: Type.Ref(CVResult) }, OPERATION_ERRORS.getRequest),
      },
    },
    async (request) => service.lookup(callerOf(request), request.params.id),
  );

  app.post<{ Body: FeedbackBody }>(
    '/v1/cv/feedback',
    {
      onRequest: lookupGuard,
      validatorCompiler: contractValidator(REFUSALS.feedback),
      schema: {
        operationId: 'submitFeedback',
        summary: 'Rate an earlier request: -1 bad, 0 neutral, 1 good',
        description: 'A new rating replaces the current one; every rating is kept in the history. Another key\'s request is 404.',
        tags: [TAG],
        security,
        body: FeedbackBody,
        response: responses({ 200: Type.Ref(FeedbackResult) }, OPERATION_ERRORS.submitFeedback),
      },
    },
    async (request) => {
      const { request_id: requestId, rating } = request.body;
      await service.rate(callerOf(request), requestId, rating);
      return { status: 'success' as const, message: 'Feedback recorded', request_id: requestId, rating };
    },
  );
};
