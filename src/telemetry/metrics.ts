/**
 * Every Prometheus series the service exports, in one place: names, help texts and label
 * sets live here and nowhere else. Callers use the domain verbs below; they never build
 * metric names by hand. Labels are closed sets (routes are templates, never raw URLs) so
 * no key, external_id or URL can ever become a label value. The one open label is the
 * organisation id of organisation_limit_rejections_total: only authenticated callers reach
 * the quota and balance checks, so its values are bounded by the organisations in the
 * database, and it is what an SRE needs to tell one customer's exhaustion from an outage.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type RecognitionOutcome = 'DONE' | 'ERROR' | 'timeout' | 'replay';
export type RecognitionMode = 'sync' | 'batch';
/** How one image's inference by one model ended (ModelRecognitionOutcome is not the request's outcome: see countModelRecognition). */
export type ModelRecognitionOutcome = 'DONE' | 'ERROR' | 'timeout';
/** 'fallback': the stable model answering a request routed to a canary that failed or had no time left. */
export type ModelAttempt = 'first' | 'fallback';
export type RejectionReason = 'auth' | 'rate_limit' | 'quota' | 'balance' | 'validation' | 'overload';
/** The organisation limits a request can exhaust: the monthly quota or the prepaid balance. */
export type OrganisationLimit = 'quota' | 'balance';
/** Why a signed image link was refused: past its expiry, or not signed with our secret. */
export type SignatureFailure = 'expired' | 'invalid';

/** Connection counts of a database pool, read at scrape time. */
export interface PoolStats {
  used: number;
  free: number;
  pending: number;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 29, 60];

export class Metrics {
  readonly registry: Registry;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly inFlight: Gauge;
  private readonly recognitions: Counter<'outcome' | 'mode'>;
  private readonly inference: Histogram<'backend' | 'model'>;
  private readonly modelRecognitions: Counter<'model' | 'version' | 'outcome' | 'attempt'>;
  private readonly modelInference: Histogram<'model' | 'version'>;
  private readonly modelFeedback: Counter<'model' | 'version' | 'rating'>;
  private readonly downloadDuration: Histogram<'result'>;
  private readonly downloadBytes: Histogram;
  private readonly batchSize: Histogram;
  private readonly rejections: Counter<'reason'>;
  private readonly organisationLimitRejections: Counter<'organisation' | 'limit'>;
  private readonly signatureFailures: Counter<'reason'>;
  private readonly tritonErrors: Counter<'code'>;
  private readonly limiterDegraded: Gauge;
  private readonly dbPool: Gauge<'state'>;
  private poolSource?: () => PoolStats;

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });

    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.inFlight = new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests being served right now.',
      registers,
    });
    this.recognitions = new Counter({
      name: 'recognitions_total',
      help: 'Recognitions by outcome (DONE, ERROR, timeout, replay) and mode (sync, batch).',
      labelNames: ['outcome', 'mode'],
      registers,
    });
    this.inference = new Histogram({
      name: 'inference_duration_seconds',
      help: 'Model inference latency by backend and model.',
      labelNames: ['backend', 'model'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8],
      registers,
    });
    // Per model and version (a canary and its stable model side by side). Model names and
    // versions come from the configuration and the served model, a closed set.
    this.modelRecognitions = new Counter({
      name: 'model_recognitions_total',
      help: 'Images each model answered (DONE) or failed on (ERROR: inference failed; timeout: the deadline passed during inference), by model and version; attempt=fallback: the stable model answering for a canary.',
      labelNames: ['model', 'version', 'outcome', 'attempt'],
      registers,
    });
    this.modelInference = new Histogram({
      name: 'model_inference_duration_seconds',
      help: 'Model inference latency of answered images, by model and version.',
      labelNames: ['model', 'version'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8],
      registers,
    });
    this.modelFeedback = new Counter({
      name: 'model_feedback_total',
      help: 'Feedback ratings given (bad, neutral, good; a changed rating counts again, the same rating posted again does not), by the model and version that answered the request.',
      labelNames: ['model', 'version', 'rating'],
      registers,
    });
    this.downloadDuration = new Histogram({
      name: 'image_download_duration_seconds',
      help: 'Duration of image URL downloads, by result (ok, error).',
      labelNames: ['result'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.downloadBytes = new Histogram({
      name: 'image_download_bytes',
      help: 'Size of downloaded images in bytes.',
      buckets: [10e3, 50e3, 100e3, 250e3, 500e3, 1e6, 2.5e6, 5e6, 10e6],
      registers,
    });
    this.batchSize = new Histogram({
      name: 'batch_images',
      help: 'Number of images per accepted batch request.',
      buckets: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      registers,
    });
    this.rejections = new Counter({
      name: 'rejections_total',
      help: 'Requests refused before processing, by reason (auth, rate_limit, quota, balance, validation).',
      labelNames: ['reason'],
      registers,
    });
    this.organisationLimitRejections = new Counter({
      name: 'organisation_limit_rejections_total',
      help: 'Requests refused because the organisation exhausted a limit (quota, balance), by organisation id.',
      labelNames: ['organisation', 'limit'],
      registers,
    });
    this.signatureFailures = new Counter({
      name: 'image_url_signature_failures_total',
      help: 'Signed image links refused, by reason (expired, invalid).',
      labelNames: ['reason'],
      registers,
    });
    this.tritonErrors = new Counter({
      name: 'triton_grpc_errors_total',
      help: 'Failed gRPC calls to Triton by gRPC status code name.',
      labelNames: ['code'],
      registers,
    });
    this.limiterDegraded = new Gauge({
      name: 'limiter_degraded',
      help: '1 while the limiter store (Redis) is unreachable and limits run on the fallback.',
      registers,
    });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- prom-client calls collect() with the gauge as `this`
    const self = this;
    this.dbPool = new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by state (used, free, pending acquires).',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = self.poolSource?.();
        if (!stats) return;
        this.set({ state: 'used' }, stats.used);
        this.set({ state: 'free' }, stats.free);
        this.set({ state: 'pending' }, stats.pending);
      },
    });
  }

  observeHttp(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds);
  }

  /** Marks one request in flight; call the returned function when it ends. */
  trackInFlight(): () => void {
    this.inFlight.inc();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight.dec();
    };
  }

  countRecognition(outcome: RecognitionOutcome, mode: RecognitionMode): void {
    this.recognitions.inc({ outcome, mode });
  }

  observeInference(backend: string, model: string, seconds: number): void {
    this.inference.observe({ backend, model }, seconds);
  }

  /** At the detector of one model: an image it could not decode is nobody's model outcome and is not counted. */
  countModelRecognition(model: string, version: string, outcome: ModelRecognitionOutcome, attempt: ModelAttempt = 'first'): void {
    this.modelRecognitions.inc({ model, version, outcome, attempt });
  }

  observeModelInference(model: string, version: string, seconds: number): void {
    this.modelInference.observe({ model, version }, seconds);
  }

  /** A request that ended before any model answered it is counted under model "none". */
  countModelFeedback(model: { name: string; version: string } | null, rating: -1 | 0 | 1): void {
    this.modelFeedback.inc({ model: model?.name ?? 'none', version: model?.version ?? '', rating: rating < 0 ? 'bad' : rating > 0 ? 'good' : 'neutral' });
  }

  observeImageDownload(seconds: number, bytes: number | undefined, ok: boolean): void {
    this.downloadDuration.observe({ result: ok ? 'ok' : 'error' }, seconds);
    if (ok && bytes !== undefined) this.downloadBytes.observe(bytes);
  }

  observeBatchSize(images: number): void {
    this.batchSize.observe(images);
  }

  countRejection(reason: RejectionReason): void {
    this.rejections.inc({ reason });
  }

  countOrganisationLimitRejection(organisation: string, limit: OrganisationLimit): void {
    this.organisationLimitRejections.inc({ organisation, limit });
  }

  countImageUrlSignatureFailure(reason: SignatureFailure): void {
    this.signatureFailures.inc({ reason });
  }

  countTritonError(code: string): void {
    this.tritonErrors.inc({ code });
  }

  setLimiterDegraded(degraded: boolean): void {
    this.limiterDegraded.set(degraded ? 1 : 0);
  }

  /** Reads pool figures at scrape time (knex: pool.numUsed() etc.). */
  watchPool(source: () => PoolStats): void {
    this.poolSource = source;
  }

  contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
