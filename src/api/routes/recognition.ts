/** The four public operations: a handler calls the use case and maps its outcome to HTTP. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RecognitionService } from '../../recognition/service.js';
import { callerOf, guard, type AuthOptions } from '../auth.js';
import type { ErrorCode } from '../errors.js';
import { BatchBody, BatchCVResult, CVResult, FeedbackBody, FeedbackResult, RequestIdParams, SyncBody, responses } from '../schemas.js';
import { parseBatch, parseFeedback, parseOrThrow, parseRequestId, parseSync } from '../inputs.js';
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

/**
 * Input is checked once, by the operation's parser (src/api/inputs.ts); the schemas on the
 * routes document it in OpenAPI and shape the responses, but do not validate requests.
 */
const parserValidates = () => () => true;


export interface RecognitionRoutesOptions {
  service: RecognitionService;
  auth: AuthOptions;
}

export const recognitionRoutes: FastifyPluginAsync<RecognitionRoutesOptions> = async (fastify, opts) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { service } = opts;
  const recognitionGuard = guard(opts.auth, 'recognition');
  const lookupGuard = guard(opts.auth, 'lookup');

  app.post(
    '/v1/cv/requests/sync',
    {
      onRequest: recognitionGuard,
      config: { input: parseSync },
      validatorCompiler: parserValidates,
      schema: {
        operationId: 'createSyncCvRequest',
        summary: 'Recognise objects in one image, synchronously',
        description:
          'Idempotent on (API key, external_id): a repeat with the same image replays the stored result ' +
          '(header Idempotent-Replayed: true, no quota or balance use); while the first is processing: 409; ' +
          'with a different image: 422; after an ERROR the image is processed again as a new request.',
        tags: [TAG],
        security,
        body: SyncBody,
        response: responses({ 200: Type.Ref(CVResult) }, OPERATION_ERRORS.createSyncCvRequest),
      },
    },
    async (request, reply) => {
      const input = parseOrThrow(parseSync, request.body);
      const { result, replayed } = await service.submitSync(callerOf(request), input, request.arrivedAt);
      if (replayed) void reply.header('Idempotent-Replayed', 'true');
      return result;
    },
  );

  app.post(
    '/v1/cv/requests/batch',
    {
      onRequest: recognitionGuard,
      config: { input: parseBatch },
      validatorCompiler: parserValidates,
      schema: {
        operationId: 'createBatchCvRequest',
        summary: 'Recognise objects in 1 to 10 images by URL, concurrently',
        description: 'Each image becomes its own request. One image failing never fails the batch: its entry is FAILED.',
        tags: [TAG],
        security,
        body: BatchBody,
        response: responses({ 200: Type.Ref(BatchCVResult) }, OPERATION_ERRORS.createBatchCvRequest),
      },
    },
    async (request) => {
      return service.submitBatch(callerOf(request), parseOrThrow(parseBatch, request.body), request.arrivedAt);
    },
  );

  // A lookup without an id is the contract's 400 missing_request_id, not a 404 route miss.
  for (const url of ['/v1/cv/requests', '/v1/cv/requests/']) {
    app.get(url, { onRequest: lookupGuard, schema: { hide: true } }, async () => {
      parseOrThrow(parseRequestId, {});
    });
  }

  app.get(
    '/v1/cv/requests/:id',
    {
      onRequest: lookupGuard,
      validatorCompiler: parserValidates,
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
    async (request) => service.lookup(callerOf(request), parseOrThrow(parseRequestId, request.params)),
  );

  app.post(
    '/v1/cv/feedback',
    {
      onRequest: lookupGuard,
      config: { input: parseFeedback },
      validatorCompiler: parserValidates,
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
      const { requestId, rating } = parseOrThrow(parseFeedback, request.body);
      await service.rate(callerOf(request), requestId, rating);
      return { status: 'success' as const, message: 'Feedback recorded', request_id: requestId, rating };
    },
  );
};
