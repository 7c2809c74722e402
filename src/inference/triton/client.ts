/**
 * A small promise client for the KServe v2 gRPC service (Triton's
 * inference.GRPCInferenceService): one HTTP/2 channel with keepalive and fast reconnect,
 * per-call deadlines and cancellation, and the never-sent retry of retry-unsent.ts.
 * Errors leave this module as InferenceError (status-map.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { retry } from '../../backoff.js';
import { injectTraceContext } from '../../telemetry/tracing.js';
import { InferenceError } from '../backend.js';
import { inferenceService } from './proto.js';
import { UNSENT_RETRY } from './retry-unsent.js';
import { isServiceError, toInferenceError } from './status-map.js';
import type {
  ModelConfigMsg,
  ModelConfigResponse,
  ModelInferRequest,
  ModelInferResponse,
  ModelMetadataResponse,
  ModelStatisticsResponse,
} from './messages.js';

export interface TritonClientOptions {
  /** host:port of the gRPC endpoint (Triton's default port is 8001). */
  url: string;
  /** Deadline of a call that brings none (ms). */
  defaultTimeoutMs?: number;
  /**
   * How long a call waits for a connection when none is up (ms, within its deadline).
   * After that it fails UNAVAILABLE without having been sent.
   */
  connectTimeoutMs?: number;
  /** HTTP/2 PING interval while calls are active (ms); a dead peer is noticed within this plus the timeout. */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  /** Largest message either way (bytes); a batch of 8 images at 512×512×3 FP32 is 25 MB. */
  maxMessageBytes?: number;
  /** Insecure by default (a sidecar or in-cluster Triton); pass TLS credentials otherwise. */
  credentials?: grpc.ChannelCredentials;
}

export interface CallOptions {
  /** Absolute deadline, epoch ms. */
  deadline?: number;
  signal?: AbortSignal;
}

type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, response: unknown) => void,
) => grpc.ClientUnaryCall;

const DEFAULTS = {
  defaultTimeoutMs: 30_000,
  connectTimeoutMs: 2_000,
  keepaliveTimeMs: 20_000,
  keepaliveTimeoutMs: 10_000,
  maxMessageBytes: 64 * 1024 * 1024,
};

export class TritonClient {
  readonly url: string;
  private readonly client: grpc.Client;
  private readonly opts: typeof DEFAULTS;

  constructor(options: TritonClientOptions) {
    this.url = options.url.replace(/^grpc:\/\//, '');
    this.opts = { ...DEFAULTS, ...definedOnly(options) };
    const Service = inferenceService();
    this.client = new Service(this.url, options.credentials ?? grpc.credentials.createInsecure(), {
      // PINGs only while calls are active: Triton's default server policy rejects idle
      // pings (too_many_pings) and would close the connection.
      'grpc.keepalive_time_ms': this.opts.keepaliveTimeMs,
      'grpc.keepalive_timeout_ms': this.opts.keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': 0,
      // Reconnect quickly after a Triton restart instead of grpc's default backoff of up to 2 minutes.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 2_000,
      'grpc.max_send_message_length': this.opts.maxMessageBytes,
      'grpc.max_receive_message_length': this.opts.maxMessageBytes,
      // With a dns:/// target naming a headless Service, spread calls over every Triton pod
      // the name resolves to (the default, pick_first, would pin one pod).
      'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    });
  }

  async serverLive(options?: CallOptions): Promise<boolean> {
    const r = (await this.call('ServerLive', {}, options)) as { live: boolean };
    return r.live;
  }

  async serverReady(options?: CallOptions): Promise<boolean> {
    const r = (await this.call('ServerReady', {}, options)) as { ready: boolean };
    return r.ready;
  }

  async modelReady(name: string, version: string, options?: CallOptions): Promise<boolean> {
    const r = (await this.call('ModelReady', { name, version }, options)) as { ready: boolean };
    return r.ready;
  }

  modelMetadata(name: string, version: string, options?: CallOptions): Promise<ModelMetadataResponse> {
    return this.call('ModelMetadata', { name, version }, options) as Promise<ModelMetadataResponse>;
  }

  async modelConfig(name: string, version: string, options?: CallOptions): Promise<ModelConfigMsg> {
    const r = (await this.call('ModelConfig', { name, version }, options)) as ModelConfigResponse;
    if (!r.config) throw new InferenceError('INTERNAL', `ModelConfig ${name}: empty response`);
    return r.config;
  }

  modelStatistics(name: string, version: string, options?: CallOptions): Promise<ModelStatisticsResponse> {
    return this.call('ModelStatistics', { name, version }, options) as Promise<ModelStatisticsResponse>;
  }

  modelInfer(request: ModelInferRequest, options?: CallOptions): Promise<ModelInferResponse> {
    return this.call('ModelInfer', request, options) as Promise<ModelInferResponse>;
  }

  close(): void {
    this.client.close();
  }

  /** One RPC: waits for a connection (bounded), sends once, retries only never-sent failures. */
  private async call(method: string, request: unknown, options: CallOptions = {}): Promise<unknown> {
    const deadline = options.deadline ?? Date.now() + this.opts.defaultTimeoutMs;
    // The address stays out of messages (they reach API clients); it is in the logs' cause.
    const what = `${method} (inference server)`;
    try {
      return await retry(
        async () => {
          if (options.signal?.aborted) throw new InferenceError('CANCELLED', `${what}: cancelled by the caller`);
          if (Date.now() >= deadline) throw new InferenceError('DEADLINE_EXCEEDED', `${what}: the time budget ran out before the call`);
          await this.waitForConnection(Math.min(deadline, Date.now() + this.opts.connectTimeoutMs), options.signal);
          return await this.unary(method, request, deadline, options.signal);
        },
        UNSENT_RETRY,
      );
    } catch (err) {
      // CANCELLED that this caller did not ask for comes from the other side: the server
      // (or a proxy) dropped the call while stopping. For the caller that is an outage.
      if (isServiceError(err) && err.code === grpc.status.CANCELLED && !options.signal?.aborted) {
        throw new InferenceError('UNAVAILABLE', `${what}: the server cancelled the call (stopping or restarting?): ${err.details}`, { cause: err });
      }
      throw toInferenceError(err, what);
    }
  }

  /**
   * Resolves once the channel is READY. Fails UNAVAILABLE (nothing sent) when it is not
   * within `until`. An idle channel is asked to connect now; one in TRANSIENT_FAILURE
   * retries on its own backoff (capped at 2 s above).
   */
  private async waitForConnection(until: number, signal?: AbortSignal): Promise<void> {
    const channel = this.client.getChannel();
    for (;;) {
      const state = channel.getConnectivityState(true);
      if (state === grpc.connectivityState.READY) return;
      if (state === grpc.connectivityState.SHUTDOWN) throw new InferenceError('UNAVAILABLE', 'the inference client is closed');
      if (Date.now() >= until) {
        throw new InferenceError('UNAVAILABLE', `no connection to the inference server (${grpc.connectivityState[state]}); the request was not sent`);
      }
      if (signal?.aborted) throw new InferenceError('CANCELLED', 'cancelled by the caller while connecting');
      await new Promise<void>((resolve) => {
        const onAbort = (): void => resolve();
        signal?.addEventListener('abort', onAbort, { once: true });
        channel.watchConnectivityState(state, until, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
  }

  private unary(method: string, request: unknown, deadline: number, signal?: AbortSignal): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, Unary>)[method].bind(this.client);
    // W3C trace context as gRPC metadata, so Triton's own trace continues the caller's span
    // (a no-op when tracing is off).
    const metadata = new grpc.Metadata();
    injectTraceContext((key, value) => metadata.set(key, value));
    return new Promise((resolve, reject) => {
      const call = fn(request, metadata, { deadline }, (err, response) => {
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(response);
      });
      const onAbort = (): void => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
