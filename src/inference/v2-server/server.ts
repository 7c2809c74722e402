/**
 * The local KServe v2 inference server: serves a Triton model repository over the same
 * gRPC service as Triton (inference.GRPCInferenceService, every RPC) and Triton's HTTP/REST
 * paths, with dynamic batching per model and the model repository extension (load/unload). For tests, local multi-process setups and
 * CPU-only deployments; production can swap it for a stock Triton without any change.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { InferenceBackend } from '../backend.js';
import { PROTO_PATH, inferenceService } from '../triton/proto.js';
import type { ModelStatisticsMsg } from '../triton/messages.js';
import { inferenceHandlers, type ServerState } from './grpc-service.js';
import { unavailable } from './errors.js';
import { handleHttp } from './http-endpoints.js';
import { discoverModels, type RepositoryModel } from './model-repository.js';
import { ModelRegistry } from './repository.js';
import { ServedModel } from './served-model.js';
import { withTimeout } from '../../deadline.js';

/** The Triton extensions this server implements (ServerMetadata.extensions). */
const EXTENSIONS = ['model_configuration', 'model_repository', 'statistics', 'binary_tensor_data'];
const SERVER_NAME = 'recog-inference-server';

export interface V2ServerOptions {
  modelRepository: string;
  /** Interface to listen on; default 0.0.0.0 (use 127.0.0.1 for loopback only). */
  host?: string;
  /** gRPC port; default 8001 (Triton's); 0 picks a free one. */
  grpcPort?: number;
  /** HTTP port for health and stats; default 8000 (Triton's); 0 picks a free one; null: none. */
  httpPort?: number | null;
  /** Overrides every model's max_queue_delay_microseconds. */
  maxQueueDelayUs?: number;
  /** Serve only these models of the repository (default: all). */
  models?: string[];
  /** Builds the backend that runs one model version (not started; the server starts it). */
  createBackend(model: RepositoryModel): InferenceBackend;
  log?: (message: string) => void;
}

export interface V2Server {
  readonly grpcPort: number;
  readonly httpPort: number | undefined;
  /** host:port for TRITON_URL. */
  readonly grpcAddress: string;
  statistics(name?: string): ModelStatisticsMsg[];
  /** Inference requests accepted and not answered yet, over all models. */
  inFlight(): number;
  /**
   * Stops: not ready at once, refuses new calls, lets calls in flight finish for up to
   * `graceMs` (default 10 s), then cuts the rest. graceMs 0 is an abrupt stop (a crash).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** Loads every model, then listens. Rejects (after unloading) if a model cannot load. */
export async function startV2Server(options: V2ServerOptions): Promise<V2Server> {
  const log = options.log ?? (() => {});
  const host = options.host ?? '0.0.0.0';
  const found = await discoverModels(options.modelRepository, options.models);
  let live = true;
  let accepting = false;
  const registry = new ModelRegistry({
    modelRepository: options.modelRepository,
    createModel: (rm) => new ServedModel({ config: rm.config, version: rm.version, backend: options.createBackend(rm), maxQueueDelayUs: options.maxQueueDelayUs }),
    log,
  });

  try {
    for (const rm of found) await registry.load(rm.config.name);
  } catch (err) {
    await registry.unloadAll();
    throw err;
  }

  const state: ServerState = {
    live: () => live,
    ready: () => accepting && registry.allReady(),
    serving: () => accepting,
    model: (name) => registry.get(name),
    models: () => registry.all(),
    isKnownButNotLoaded: (name) => registry.isKnownButNotLoaded(name),
    index: (readyOnly) => registry.index(readyOnly),
    load: async (name) => {
      if (!accepting) throw unavailable('the server is shutting down');
      await registry.load(name);
    },
    unload: (name) => registry.unload(name),
    metadata: () => ({ name: SERVER_NAME, version: serverVersion(), extensions: options.httpPort === null ? EXTENSIONS.filter((e) => e !== 'binary_tensor_data') : EXTENSIONS }),
  };

  // Room for requests well above max_batch_size, so that they get Triton's INVALID_ARGUMENT
  // "batch-size must be <= N" rather than the transport's RESOURCE_EXHAUSTED; still a bound
  // (Triton's own is 2 GiB). Models loaded later share the limit set at start.
  const largest = Math.max(64 * 1024 * 1024, ...registry.all().map((m) => 4 * m.maxRequestBytes() + 64 * 1024));
  const grpcServer = new grpc.Server({
    'grpc.max_receive_message_length': largest,
    'grpc.max_send_message_length': -1,
    // Accept the client's keepalive PINGs during calls (see triton/client.ts).
    'grpc.keepalive_permit_without_calls': 1,
  });
  grpcServer.addService(inferenceService().service, inferenceHandlers(state));
  let grpcPort: number;
  try {
    grpcPort = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${options.grpcPort ?? 8001}`, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
  } catch (err) {
    await registry.unloadAll();
    throw err;
  }

  let httpServer: http.Server | undefined;
  let httpPort: number | undefined;
  if (options.httpPort !== null) {
    httpServer = http.createServer((req, res) => {
      handleHttp(state, req, res, { maxBodyBytes: largest }).catch((err: unknown) => {
        // A bug here must cost one request, not the server.
        log(`HTTP ${req.method} ${req.url}: ${(err as Error).message}`);
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"internal error"}');
      });
    });
    httpServer.keepAliveTimeout = 5_000;
    try {
      await new Promise<void>((resolve, reject) => {
        httpServer!.once('error', reject);
        httpServer!.listen(options.httpPort ?? 8000, host, () => resolve());
      });
    } catch (err) {
      grpcServer.forceShutdown();
      await registry.unloadAll();
      throw err;
    }
    httpPort = (httpServer.address() as AddressInfo).port;
  }
  accepting = true;
  log(`v2 inference server: gRPC on ${host}:${grpcPort}${httpPort !== undefined ? `, HTTP on ${host}:${httpPort}` : ''}`);

  let closing: Promise<void> | undefined;
  const close = async (graceMs: number): Promise<void> => {
    accepting = false; // ServerReady / ModelReady / /v2/health/ready go false at once
    if (graceMs <= 0) {
      grpcServer.forceShutdown();
      for (const m of registry.all()) m.batcher.abortQueued('the server stopped');
    } else {
      // tryShutdown refuses new calls and waits for those in flight, whose batches go out now.
      for (const m of registry.all()) m.batcher.flush();
      const drained = new Promise<void>((resolve) => grpcServer.tryShutdown(() => resolve()));
      if ((await withTimeout(drained, graceMs, () => 'timeout' as const)) === 'timeout') {
        log(`shutdown: calls still running after ${graceMs} ms, cutting them`);
        grpcServer.forceShutdown();
        for (const m of registry.all()) m.batcher.abortQueued('the server stopped');
      }
    }
    live = false;
    await registry.unloadAll();
    if (httpServer) {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    }
    log('v2 inference server stopped');
  };

  return {
    grpcPort,
    httpPort,
    grpcAddress: `${host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${grpcPort}`,
    inFlight: () => registry.all().reduce((n, m) => n + m.inFlight, 0),
    statistics: (name) => registry.all().filter((m) => name === undefined || m.name === name).map((m) => m.stats.snapshot()),
    close: (o = {}) => (closing ??= close(o.graceMs ?? 10_000)),
  };
}

let version: string | undefined;
/** The package version (ServerMetadata.version). */
function serverVersion(): string {
  if (version === undefined) {
    try {
      version = (JSON.parse(readFileSync(path.join(path.dirname(PROTO_PATH), '..', 'package.json'), 'utf8')) as { version?: string }).version ?? '0';
    } catch {
      version = '0';
    }
  }
  return version;
}
