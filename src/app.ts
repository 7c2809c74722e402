/**
 * Builds the Fastify application from its dependencies. No side effects on import:
 * server.ts owns the process (listen, signals, shutdown); tests build the app through
 * test/helpers/app.ts. createServices() composes the real dependencies from the config.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Knex } from 'knex';
import type { Config } from './config.js';
import { registerConsole, type ConsoleOptions } from './console/plugin.js';
import { registerOpenApi } from './api/openapi.js';
import { installConnectionLimits, serverTimeoutOptions } from './api/connection-limits.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './api/error-handler.js';
import { installHsts } from './api/transport-security.js';
import { ApiError, REJECTION_REASONS } from './api/errors.js';
import { recognitionRoutes } from './api/routes/recognition.js';
import { operationsRoutes, type ReadinessCheck } from './api/routes/operations.js';
import { sharedSchemas } from './api/schemas.js';
import { decodeBase64Image } from './images/base64.js';
import { createImageIntake } from './images/intake.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner, IntakeImage } from './images/types.js';
import type { InferenceBackend } from './inference/backend.js';
import { createDetector, createDetectorInBackground } from './inference/create-detector.js';
import type { Limits } from './limits/types.js';
import { isRemoteCatalog } from './models/catalog-source.js';
import { telemetryPlugin } from './telemetry/http.js';
import { instrumentBackend, instrumentDetector, instrumentFetcher, instrumentImageStore, instrumentKnex, watchLimiter } from './telemetry/instrument.js';
import { Metrics } from './telemetry/metrics.js';
import { createLimits } from './limits/index.js';
import type { ObjectDetector } from './recognition/detection.js';
import { CapacityGate, gateDetector } from './recognition/capacity.js';
import { RecognitionService } from './recognition/service.js';
import { pingDb } from './store/db.js';
import { PgFeedbackRepository } from './store/feedback.js';
import { imageRemoved, sweepExpiredImages } from './store/image-retention.js';
import { PgRequestRepository, closeInstanceRequests, failAbandonedRequests } from './store/requests.js';

export const API_VERSION = '1.0.0';

export interface AppDeps {
  config: Readonly<Config>;
  db: Knex;
  detector: ObjectDetector;
  backend: InferenceBackend;
  limits: Limits;
  fetcher: ImageFetcher;
  imageStore: ImageStore;
  signer: ImageUrlSigner;
  /** IMAGE_URL_MODE=presigned: image_url in results is a presigned store link. */
  presignImage?: (requestId: string) => Promise<string>;
  decodeBase64?: (input: string, maxEncodedBytes: number) => IntakeImage;
  /** Tags this process's requests (graceful shutdown closes only its own). */
  instanceId?: string;
  /** Prometheus metrics, served at /metrics (default: a fresh registry). */
  metrics?: Metrics;
  /** Console overrides (tests: sign-in throttling thresholds, the password hasher, where the web files are). */
  console?: Pick<ConsoleOptions, 'throttle' | 'passwords' | 'assetsDir' | 'clock'>;
  /** Admission to decode/inference (default: from config.detectConcurrency and detectQueueLength). */
  detectGate?: CapacityGate;
}

export interface BuildAppOptions {
  logger?: FastifyServerOptions['logger'];
  /** An existing pino logger (server.ts); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger;
  /** Sweep abandoned QUEUED/PROCESSING requests at start and every `sweepIntervalMs` (default on). */
  sweepAbandoned?: boolean;
  sweepIntervalMs?: number;
  /** Delete images past IMAGE_RETENTION_DAYS at start and every `retentionIntervalMs` (default on, hourly). */
  sweepImages?: boolean;
  retentionIntervalMs?: number;
}

/** Stable across restarts of the same process slot (host and port), unique among live replicas. */
export function instanceIdFor(config: Pick<Config, 'port'>, hostname = os.hostname()): string {
  // Port 0 (an ephemeral port, tests) names no slot: several may run at once.
  return config.port === 0 ? `${hostname}:0:${randomBytes(6).toString('hex')}` : `${hostname}:${config.port}`;
}

/**
 * No request runs past its deadline (sync limit) while its process lives: at the deadline the
 * process ends it itself. The margin covers that last write and its retries (db-faults.ts);
 * past it, nobody will finish the request.
 */
export const ABANDON_MARGIN_MS = 10_000;
export function abandonedAfterMs(config: Pick<Config, 'syncTimeoutMs'>): number {
  return config.syncTimeoutMs + ABANDON_MARGIN_MS;
}

/** How often the sweep runs: the longest a request can stay unfinished is abandonedAfterMs plus this. */
export const SWEEP_INTERVAL_MS = 5_000;

export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config, db } = deps;
  const instanceId = deps.instanceId ?? randomBytes(8).toString('hex');
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    bodyLimit: config.bodyLimitBytes,
    ...serverTimeoutOptions(config),
    // src/telemetry writes one line per request (with trace id, key prefix, route) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: () => randomUUID(),
    // Our own 503 (with error_code) replaces Fastify's bare one while draining.
    return503OnClosing: false,
    // Every refusal carries the contract's body: an undecodable URL (before routing) and what
    // node's HTTP parser refuses (bad request line, headers too large, a client too slow).
    frameworkErrors,
    clientErrorHandler,
    // A "__proto__" or "constructor.prototype" key is dropped, not answered "not valid JSON":
    // no body field has that name, and dropping it is what makes parsing safe.
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });

  for (const schema of sharedSchemas) app.addSchema(schema);
  // The request's arrival, before authentication and before its body is read: the sync
  // deadline counts from here.
  app.decorateRequest('arrivedAt', 0);
  app.addHook('onRequest', async (request) => {
    request.arrivedAt = Date.now();
  });
  const errorHandling = installErrorHandling(app);
  // First, so its hooks also see the 503s of draining: request metrics, rejections by reason,
  // the SERVER span, one log line per request, GET /metrics.
  const metrics = deps.metrics ?? new Metrics();
  await app.register(telemetryPlugin, { metrics, rejectionReasons: REJECTION_REASONS });
  // A method the path's own route lacks is 405, not a parametric route's answer (after telemetry: measured).
  app.addHook('onRequest', errorHandling.refuseShadowedMethods);

  installConnectionLimits(app, config);
  // Strict-Transport-Security on every answer (API and console) when published over https.
  installHsts(app, config.publicBaseUrl);

  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (draining) {
      void reply.header('Connection', 'close');
      throw new ApiError('SERVICE_UNAVAILABLE');
    }
  });
  // Responses finished while draining close their keep-alive connection, so close() is not
  // held up by idle sockets until the keep-alive timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (draining) void reply.header('Connection', 'close');
  });

  const detectGate = deps.detectGate ?? new CapacityGate(config.detectConcurrency, config.detectQueueLength);
  app.decorate('detectGate', detectGate);
  const requests = new PgRequestRepository(db, instanceId);
  const service = new RecognitionService({
    observer: { recognition: (outcome, mode) => metrics.countRecognition(outcome, mode), batchSize: (n) => metrics.observeBatchSize(n) },
    requests,
    feedback: new PgFeedbackRepository(db),
    detector: gateDetector(deps.detector, detectGate),
    fetcher: deps.fetcher,
    decodeBase64: deps.decodeBase64 ?? decodeBase64Image,
    imageStore: deps.imageStore,
    signer: deps.signer,
    presignImage: deps.presignImage,
    settings: { syncTimeoutMs: config.syncTimeoutMs, batchConcurrency: config.batchConcurrency, maxBase64Bytes: config.imageMaxBase64Bytes },
    logger: {
      warn: (obj, msg) => app.log.warn(obj, msg),
      error: (obj, msg) => app.log.error(obj, msg),
    },
  });
  app.decorate('recognition', service);

  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl, version: API_VERSION });

  const checks: Record<string, ReadinessCheck> = {
    database: () => pingDb(db),
    limits: () => deps.limits.ready(),
    inference: async () => {
      if (await deps.backend.ready()) return { ok: true };
      const why = (deps.backend as { lastError?: string }).lastError;
      return { ok: false, detail: why ? `model not ready: ${why}` : 'model not ready' };
    },
  };
  const store = deps.imageStore;
  if (store.ready) checks.imageStore = () => store.ready!();
  await app.register(operationsRoutes, { checks, imageStore: store, signer: deps.signer, imageRemoved: (id) => imageRemoved(db, id) });
  await app.register(recognitionRoutes, {
    service,
    auth: { db, limits: deps.limits },
  });
  await registerConsole(app, { db, signer: deps.signer, config, ...deps.console });

  if (options.sweepAbandoned ?? true) {
    const sweep = async () => {
      const n = await failAbandonedRequests(db, abandonedAfterMs(config));
      if (n > 0) app.log.warn({ count: n }, 'marked abandoned requests ERROR');
    };
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      // A restart under the same stable instance id (same host and port) cannot have live work:
      // whatever that id left unfinished was abandoned by the previous run, however recent.
      const previous = await failAbandonedRequests(db, 0, instanceId);
      if (previous > 0) app.log.warn({ count: previous }, 'marked requests of the previous run ERROR');
      await sweep();
      timer = setInterval(() => void sweep().catch((err: unknown) => app.log.error({ err }, 'abandoned-request sweep failed')), options.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
      timer.unref();
    });
    app.addHook('onClose', async () => clearInterval(timer));
  }
  if ((options.sweepImages ?? true) && config.imageRetentionDays > 0) {
    // Every replica runs it; an advisory lock lets one delete while the others skip.
    const sweep = async () => {
      const r = await sweepExpiredImages(db, deps.imageStore, config.imageRetentionDays);
      if (r.deleted > 0 || r.failed > 0) app.log.info({ deleted: r.deleted, failed: r.failed, retentionDays: config.imageRetentionDays }, 'image retention sweep');
    };
    const run = () => void sweep().catch((err: unknown) => app.log.error({ err }, 'image retention sweep failed'));
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      run();
      timer = setInterval(run, options.retentionIntervalMs ?? 3_600_000);
      timer.unref();
    });
    app.addHook('onClose', async () => clearInterval(timer));
  }
  // After in-flight HTTP requests drained (or the drain bound cut them off), nothing of ours stays unfinished.
  app.addHook('onClose', async () => {
    const n = await closeInstanceRequests(db, instanceId).catch(() => 0);
    if (n > 0) app.log.warn({ count: n }, 'closed unfinished requests at shutdown');
  });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    recognition: RecognitionService;
    detectGate: CapacityGate;
  }
  interface FastifyRequest {
    /** Epoch ms at which the request arrived (its first onRequest hook). */
    arrivedAt: number;
  }
}

/** The real dependencies, from the configuration (the composition root's half of the work). */
export interface Services extends AppDeps {
  close(): Promise<void>;
}

export async function createServices(config: Readonly<Config>, db: Knex, log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }): Promise<Services> {
  const closers: Array<() => Promise<void>> = [];
  try {
    const metrics = new Metrics();
    const limits = await createLimits({ config, redisUrl: config.redisUrl, logger: log });
    closers.push(() => limits.close());
    const unwatchLimiter = watchLimiter(limits, metrics);
    closers.push(async () => unwatchLimiter());
    // With Triton the server listens at once and readiness waits for the model (it may take
    // minutes to load), and for an s3:// catalog (it may not be uploaded yet); the embedded
    // ONNX Runtime with a catalog file loads in seconds and is awaited.
    const { detector, backend } =
      config.tritonUrl === undefined && !isRemoteCatalog(config.modelCatalog)
        ? await createDetector(config, (b) => instrumentBackend(b, metrics))
        : await createDetectorInBackground(config, (b) => instrumentBackend(b, metrics), (err) =>
            log.warn({ err: (err as Error).message }, 'inference backend not ready'),
          );
    closers.push(() => backend.close());
    const detachDb = instrumentKnex(db, metrics);
    closers.push(async () => detachDb());
    const intake = await createImageIntake(config);
    const storeClose = (intake.store as { close?: () => void }).close;
    if (storeClose) closers.push(async () => storeClose.call(intake.store));
    return {
      config,
      db,
      metrics,
      detector: instrumentDetector(detector),
      backend,
      limits,
      fetcher: instrumentFetcher(intake.fetcher, metrics),
      imageStore: instrumentImageStore(intake.store),
      signer: intake.signer,
      presignImage: intake.presign,
      async close() {
        for (const c of closers.reverse()) await c().catch(() => {});
      },
    };
  } catch (err) {
    for (const c of closers.reverse()) await c().catch(() => {});
    throw err;
  }
}
