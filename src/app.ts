/**
 * Builds the Fastify application: one plugin per dependency (src/app/), then the routes.
 * No side effects on import: server.ts owns the process (listen, signals, shutdown); tests
 * build the app through test/helpers/app.ts. The clients a caller passes in stay the
 * caller's; those it leaves out the app opens from the config and closes itself.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Knex } from 'knex';
import type { Config } from './config.js';
import { registerConsole, type ConsoleOptions } from './console/plugin.js';
import { registerOpenApi } from './api/openapi.js';
import { installConnectionLimits, serverTimeoutOptions } from './api/connection-limits.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './api/error-handler.js';
import { installHsts } from './api/transport-security.js';
import { ApiError, REJECTION_REASONS } from './api/errors.js';
import { recognitionRoutes } from './api/routes/recognition.js';
import { operationsRoutes } from './api/routes/operations.js';
import { sharedSchemas } from './api/schemas.js';
import { database } from './app/database.js';
import { imageStore } from './app/image-store.js';
import { inference } from './app/inference.js';
import { limits } from './app/limits.js';
import { readiness } from './app/readiness.js';
import { recognition } from './app/recognition.js';
import { sweeps, type SweepsOptions } from './app/sweeps.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner, IntakeImage } from './images/types.js';
import type { InferenceBackend } from './inference/backend.js';
import type { Limits } from './limits/types.js';
import { telemetryPlugin } from './telemetry/http.js';
import { Metrics } from './telemetry/metrics.js';
import type { ObjectDetector } from './recognition/detection.js';
import type { CapacityGate } from './recognition/capacity.js';
import { imageRemoved } from './store/image-retention.js';

export const API_VERSION = '1.0.0';

/** The outside clients; a caller that passes one in closes it after app.close(). */
export interface Clients {
  detector: ObjectDetector;
  backend: InferenceBackend;
  limits: Limits;
  fetcher: ImageFetcher;
  imageStore: ImageStore;
  signer: ImageUrlSigner;
  /** IMAGE_URL_MODE=presigned: image_url in results is a presigned store link. */
  presignImage?: (requestId: string) => Promise<string>;
}

export interface AppDeps extends Partial<Clients> {
  config: Readonly<Config>;
  /** The caller's pool: it migrates before and closes it after the app. */
  db: Knex;
  decodeBase64?: (input: string, maxEncodedBytes: number) => IntakeImage;
  /** Tags this process's requests (graceful shutdown closes only its own). */
  instanceId?: string;
  /** Prometheus metrics, served at /metrics (default: a fresh registry). */
  metrics?: Metrics;
  /** Console overrides (tests: sign-in throttling thresholds, the password hasher, where the web files are). */
  console?: Pick<ConsoleOptions, 'throttle' | 'passwords' | 'assetsDir' | 'clock'>;
  /** The capacity gate of decode/inference (default: from config.detectConcurrency and detectQueueLength). */
  detectGate?: CapacityGate;
}

export interface BuildAppOptions extends Omit<SweepsOptions, 'config' | 'instanceId'> {
  logger?: FastifyServerOptions['logger'];
  /** An existing pino logger (server.ts); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger;
}

/** Stable across restarts of the same process slot (host and port), unique among live replicas. */
export function instanceIdFor(config: Pick<Config, 'port'>, hostname = os.hostname()): string {
  // Port 0 (an ephemeral port, tests) names no slot: several may run at once.
  return config.port === 0 ? `${hostname}:0:${randomBytes(6).toString('hex')}` : `${hostname}:${config.port}`;
}

export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = deps;
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
    // Every path parameter reaches its route, whose schema bounds it and answers with the
    // route's own code (INVALID_REQUEST_ID, VALIDATION_FAILED) instead of a framework refusal
    // before routing. The request line is already bounded by node's 16 KiB header limit, and
    // no route matches a parameter with a regular expression (what the default 100 guards).
    routerOptions: { maxParamLength: 16_384 },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  try {
    await compose(app, deps, options);
    return app;
  } catch (err) {
    // What the plugins opened before the failure closes with the app.
    await app.close().catch(() => {});
    throw err;
  }
}

async function compose(app: FastifyInstance, deps: AppDeps, options: BuildAppOptions): Promise<void> {
  const { config, db } = deps;
  const instanceId = deps.instanceId ?? randomBytes(8).toString('hex');
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

  // In the order /readyz lists their checks. onClose hooks run last registered first: the
  // sweeps stop, then this instance's unfinished requests end, then the clients close.
  await app.register(readiness);
  await app.register(database, { db, metrics });
  await app.register(dependencies, { ...deps, metrics });
  await app.register(recognition, { config, metrics, instanceId, decodeBase64: deps.decodeBase64, detectGate: deps.detectGate });

  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl, version: API_VERSION });
  const { images } = app;
  await app.register(operationsRoutes, { checks: app.readiness, imageStore: images.store, signer: images.signer, imageRemoved: (id) => imageRemoved(db, id), countSignatureFailure: (reason) => metrics.countImageUrlSignatureFailure(reason) });
  await app.register(recognitionRoutes, { service: app.recognition, auth: { db, limits: app.limits } });
  await registerConsole(app, { db, signer: images.signer, config, ...deps.console });
  const { sweepAbandoned, sweepIntervalMs, sweepImages, retentionIntervalMs } = options;
  await app.register(sweeps, { config, instanceId, sweepAbandoned, sweepIntervalMs, sweepImages, retentionIntervalMs });
}

type LogLike = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

interface ClientOptions extends Partial<Clients> {
  config: Readonly<Config>;
  metrics: Metrics;
  /** Default: the app's logger. */
  log?: LogLike;
}

/** The clients' plugins (after `readiness`): a client passed in is used as is, the others are opened. */
const dependencies = fp<ClientOptions>(async (app, deps) => {
  const { config, metrics, log } = deps;
  await app.register(limits, { config, metrics, log, limits: deps.limits });
  await app.register(inference, { config, metrics, log, inference: deps.detector && deps.backend && { detector: deps.detector, backend: deps.backend } });
  const given = deps.fetcher && deps.imageStore && deps.signer && { fetcher: deps.fetcher, store: deps.imageStore, signer: deps.signer, presign: deps.presignImage };
  await app.register(imageStore, { config, metrics, images: given });
});

declare module 'fastify' {
  interface FastifyRequest {
    /** Epoch ms at which the request arrived (its first onRequest hook). */
    arrivedAt: number;
  }
}

/** The clients opened from the configuration, for callers that share them between apps (tests). */
export type Services = AppDeps & Clients & { metrics: Metrics; close(): Promise<void> };

/**
 * Opens the clients with the same plugins the app uses, on an instance of their own that
 * serves nothing: its close() closes them, in reverse order of opening.
 */
export async function createServices(config: Readonly<Config>, db: Knex, log: LogLike): Promise<Services> {
  const metrics = new Metrics();
  const host = Fastify({ logger: false });
  try {
    await host.register(readiness);
    await host.register(dependencies, { config, metrics, log });
    await host.ready();
  } catch (err) {
    await host.close().catch(() => {});
    throw err;
  }
  const { images } = host;
  return {
    config,
    db,
    metrics,
    detector: host.detector,
    backend: host.backend,
    limits: host.limits,
    fetcher: images.fetcher,
    imageStore: images.store,
    signer: images.signer,
    presignImage: images.presign,
    close: () => host.close().catch(() => {}),
  };
}
