/** The four operations of the public API (`/v1/cv`), authenticated by an API key. */
import { toBase64 } from './base64.js';
import { normalizeBatch, normalizeFeedback, normalizeResult } from './normalize.js';
import { readJson, Transport, type TransportOptions } from './transport.js';
import type { BatchResult, FeedbackResult, RateLimitInfo, Rating, RecognitionResult } from './types.js';
import type { Body } from './wire.js';

export interface RecognitionClientOptions extends TransportOptions {
  apiKey: string;
}

export type ImageInput =
  | { imageUrl: string }
  | { imageBase64: string }
  /** Raw image bytes; sent as base64. */
  | { image: Uint8Array };

/**
 * Per-request detection controls. The server checks them (400 with a catalogue code when one
 * is out of range), and a replay answers the stored result whatever the new request's controls.
 */
export interface DetectionControls {
  /** Only detections with at least this confidence (0..1). */
  minConfidence?: number;
  /** At most this many detections (1..100), the most confident first. */
  maxResults?: number;
  /** Only these labels: narrows the key's classes, never widens them (a label the key cannot see is refused). */
  classes?: string[];
}

export type RecognizeInput = ImageInput &
  DetectionControls & {
    /** The idempotency id: the same id and image replay the stored result without a new charge. */
    externalId: string;
  };

export interface CallOptions {
  signal?: AbortSignal;
}

/** A batch's controls apply to every image. */
export interface BatchOptions extends CallOptions, DetectionControls {}

type WireControls = Pick<Body<'createSyncCvRequest'> & Body<'createBatchCvRequest'>, 'min_confidence' | 'max_results' | 'classes'>;

// JSON leaves out the controls left undefined, so the server applies none of them.
const wireControls = (c: DetectionControls): WireControls => ({ min_confidence: c.minConfidence, max_results: c.maxResults, classes: c.classes });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function rateLimitOf(res: Response): RateLimitInfo {
  const n = (name: string) => {
    const v = res.headers.get(name);
    return v !== null && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  return { limit: n('ratelimit-limit'), remaining: n('ratelimit-remaining'), resetSeconds: n('ratelimit-reset') };
}

export class RecognitionClient {
  private readonly transport: Transport;
  private readonly apiKey: string;
  /** The rate-limit headers of the latest answer that carried them. */
  lastRateLimit: RateLimitInfo = {};

  constructor(options: RecognitionClientOptions) {
    if (!options.apiKey) throw new TypeError('an API key is required');
    this.apiKey = options.apiKey;
    this.transport = new Transport(options);
  }

  /** POST /v1/cv/requests/sync. Retried safely: the external_id makes it idempotent. */
  async recognize(input: RecognizeInput, options: CallOptions = {}): Promise<RecognitionResult> {
    const image = 'imageUrl' in input ? { image_url: input.imageUrl } : { image_base64: 'imageBase64' in input ? input.imageBase64 : toBase64(input.image) };
    const body: Body<'createSyncCvRequest'> = { external_id: input.externalId, ...image, ...wireControls(input) };
    const res = await this.call('POST', '/v1/cv/requests/sync', body, 'idempotent', options);
    return normalizeResult(await readJson(res), res.headers.get('idempotent-replayed') === 'true');
  }

  /**
   * POST /v1/cv/requests/batch. A batch is not idempotent (its external_id only tracks), so
   * it is retried only when the server refused it before doing any work.
   */
  async batch(imageUrls: string[], externalId?: string, options: BatchOptions = {}): Promise<BatchResult> {
    // JSON leaves out an undefined external_id.
    const body: Body<'createBatchCvRequest'> = { image_urls: imageUrls, external_id: externalId, ...wireControls(options) };
    const res = await this.call('POST', '/v1/cv/requests/batch', body, 'refused-only', options);
    return normalizeBatch(await readJson(res));
  }

  /** GET /v1/cv/requests/{id}. */
  async getRequest(requestId: string, options: CallOptions = {}): Promise<RecognitionResult> {
    if (!UUID.test(requestId)) throw new TypeError(`not a request id (a UUID): ${requestId}`);
    const res = await this.call('GET', `/v1/cv/requests/${requestId}`, undefined, 'idempotent', options);
    return normalizeResult(await readJson(res));
  }

  /** POST /v1/cv/feedback. Idempotent: the same rating again changes nothing. */
  async feedback(requestId: string, rating: Rating, options: CallOptions = {}): Promise<FeedbackResult> {
    if (rating !== -1 && rating !== 0 && rating !== 1) throw new TypeError('rating must be -1, 0 or 1');
    const res = await this.call('POST', '/v1/cv/feedback', { request_id: requestId, rating } satisfies Body<'submitFeedback'>, 'idempotent', options);
    return normalizeFeedback(await readJson(res));
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown, retry: 'idempotent' | 'refused-only', options: CallOptions): Promise<Response> {
    const res = await this.transport.send({ method, path, body, retry, signal: options.signal, headers: { 'x-api-key': this.apiKey } });
    this.lastRateLimit = rateLimitOf(res);
    return res;
  }
}
