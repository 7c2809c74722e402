/**
 * The gRPC handlers of inference.GRPCInferenceService over the served models: every RPC
 * of Triton's service, with Triton's status codes and wording (the conformance test runs
 * the official tritonclient against both servers). NOT_FOUND for an unknown model
 * ("is not found"), a repository model that is not loaded ("has no available versions")
 * or version; INVALID_ARGUMENT for a malformed request or a batch above max_batch_size;
 * UNAVAILABLE while loading, shutting down or when the queue is full; CANCELLED /
 * DEADLINE_EXCEEDED as the client asked. Shared-memory registration and changing trace or
 * log settings are refused (UNIMPLEMENTED): tensors travel in the request here.
 */
import * as grpc from '@grpc/grpc-js';
import { InferenceError } from '../backend.js';
import type { ModelInferRequest, ModelStatisticsMsg } from '../triton/messages.js';
import { V2Error, invalid, noAvailableVersions, unknownModel } from './errors.js';
import type { ModelIndexEntry } from './repository.js';
import type { ServedModel } from './served-model.js';

export interface ServerState {
  live(): boolean;
  /** Strict readiness (Triton's): serving, and every model the server knows is loaded and ready. */
  ready(): boolean;
  /** Taking requests: false once shutdown began. A model's own readiness needs this and the model's. */
  serving(): boolean;
  model(name: string): ServedModel | undefined;
  models(): ServedModel[];
  /** A model of the repository the server knows but does not serve now (unloaded, failed). */
  isKnownButNotLoaded(name: string): boolean;
  index(readyOnly: boolean): Promise<ModelIndexEntry[]>;
  load(name: string): Promise<void>;
  unload(name: string): Promise<void>;
  metadata(): { name: string; version: string; extensions: string[] };
}

type Handler = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

const INFERENCE_TO_GRPC: Record<InferenceError['code'], grpc.status> = {
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  DEADLINE_EXCEEDED: grpc.status.DEADLINE_EXCEEDED,
  MODEL_NOT_READY: grpc.status.UNAVAILABLE,
  INVALID_INPUT: grpc.status.INVALID_ARGUMENT,
  RESOURCE_EXHAUSTED: grpc.status.UNAVAILABLE,
  CANCELLED: grpc.status.CANCELLED,
  INTERNAL: grpc.status.INTERNAL,
};

export function toGrpcError(err: unknown): Partial<grpc.StatusObject> {
  if (err instanceof V2Error) return { code: err.code, details: err.message };
  if (err instanceof InferenceError) return { code: INFERENCE_TO_GRPC[err.code], details: err.message };
  return { code: grpc.status.INTERNAL, details: `internal error: ${(err as Error)?.message ?? String(err)}` };
}

/** Unary handler from an async function; thrown errors become statuses. */
function unary<Req, Res>(fn: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res): Handler {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request as Req, call as grpc.ServerUnaryCall<Req, Res>))
      .then(
        (res) => callback(null, res),
        (err) => callback(toGrpcError(err) as grpc.ServiceError),
      );
  };
}

/** The served model of a request, or Triton's NOT_FOUND for it. */
export function findModel(state: ServerState, name: string, version: string): ServedModel {
  const m = state.model(name);
  if (!m) throw state.isKnownButNotLoaded(name) ? noAvailableVersions(name) : unknownModel(name);
  m.checkVersion(version);
  return m;
}

/** Statistics of one model (or all with an empty name); Triton answers INVALID_ARGUMENT for a model it does not serve. */
export function statisticsOf(state: ServerState, name: string, version: string): ModelStatisticsMsg[] {
  if (name === '') return state.models().map((m) => m.stats.snapshot());
  const m = state.model(name);
  if (!m || (version !== '' && version !== m.version)) throw invalid(`requested model '${name}' is not available`);
  return [m.stats.snapshot()];
}

/** Aborts when the call is cancelled or its deadline passes: a queued request then leaves the queue without running. */
function cancellation(call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>): { signal: AbortSignal; release(): void } {
  const abort = new AbortController();
  const onCancel = (): void => abort.abort();
  call.once('cancelled', onCancel);
  return { signal: abort.signal, release: () => call.removeListener('cancelled', onCancel) };
}

/**
 * ModelStreamInfer without decoupled models: one response per request, written as each
 * completes; a failed request is answered with its error_message and the stream goes on.
 * The stream ends once the client has closed its side and every response is written.
 */
function streamInfer(state: ServerState) {
  return (call: grpc.ServerDuplexStream<ModelInferRequest, unknown>): void => {
    // One cancellation for the whole stream: every request still queued leaves with it.
    const c = cancellation(call);
    let open = 0;
    let clientDone = false;
    let ended = false;
    const finish = (): void => {
      if (clientDone && open === 0 && !ended) {
        ended = true;
        c.release();
        call.end();
      }
    };
    call.on('data', (r: ModelInferRequest) => {
      open++;
      void Promise.resolve()
        .then(() => findModel(state, r.model_name, r.model_version).infer(r, c.signal))
        .then(
          (response) => ({ error_message: '', infer_response: response }),
          (err: unknown) => ({ error_message: toGrpcError(err).details ?? 'inference failed', infer_response: null }),
        )
        .then((message) => {
          if (!ended && !call.cancelled) call.write(message);
        })
        .finally(() => {
          open--;
          finish();
        });
    });
    call.on('end', () => {
      clientDone = true;
      finish();
    });
    call.on('error', () => {
      clientDone = true;
    });
  };
}

const refuse = (what: string): V2Error => new V2Error(grpc.status.UNIMPLEMENTED, `${what} is not supported by this server: send tensors in the request`);

/** What this server logs, as Triton reports its log settings (read-only here). */
const LOG_SETTINGS = {
  log_file: { string_param: '' },
  log_info: { bool_param: true },
  log_warning: { bool_param: true },
  log_error: { bool_param: true },
  log_verbose_level: { uint32_param: 0 },
  log_format: { string_param: 'default' },
};

export function inferenceHandlers(state: ServerState): grpc.UntypedServiceImplementation {
  return {
    ServerLive: unary(() => ({ live: state.live() })),
    ServerReady: unary(() => ({ ready: state.ready() })),
    ServerMetadata: unary(() => state.metadata()),
    // An unknown model is "not ready", not an error: readiness probes only want a yes or no.
    ModelReady: unary((r: { name: string; version: string }) => {
      const m = state.model(r.name);
      return { ready: state.serving() && !!m && m.isReady() && (r.version === '' || r.version === m.version) };
    }),
    ModelMetadata: unary((r: { name: string; version: string }) => findModel(state, r.name, r.version).metadata()),
    ModelConfig: unary((r: { name: string; version: string }) => ({ config: findModel(state, r.name, r.version).modelConfig() })),
    ModelStatistics: unary((r: { name: string; version: string }) => ({ model_stats: statisticsOf(state, r.name, r.version) })),
    ModelInfer: unary(async (r: ModelInferRequest, call) => {
      const model = findModel(state, r.model_name, r.model_version);
      const c = cancellation(call);
      try {
        return await model.infer(r, c.signal);
      } finally {
        c.release();
      }
    }),
    ModelStreamInfer: streamInfer(state) as grpc.handleBidiStreamingCall<unknown, unknown>,
    RepositoryIndex: unary(async (r: { repository_name: string; ready: boolean }) => ({ models: await state.index(r.ready) })),
    RepositoryModelLoad: unary(async (r: { model_name: string }) => {
      await state.load(r.model_name);
      return {};
    }),
    RepositoryModelUnload: unary(async (r: { model_name: string }) => {
      await state.unload(r.model_name);
      return {};
    }),
    SystemSharedMemoryStatus: unary((r: { name: string }) => {
      if (r.name !== '') throw invalid(`Unable to find system shared memory region: '${r.name}'`);
      return { regions: {} };
    }),
    SystemSharedMemoryRegister: unary(() => {
      throw refuse('system shared memory');
    }),
    // Nothing is registered, so unregistering (one or all) has nothing to do, as on Triton.
    SystemSharedMemoryUnregister: unary(() => ({})),
    CudaSharedMemoryStatus: unary((r: { name: string }) => {
      if (r.name !== '') throw invalid(`Unable to find cuda shared memory region: '${r.name}'`);
      return { regions: {} };
    }),
    CudaSharedMemoryRegister: unary(() => {
      throw refuse('CUDA shared memory');
    }),
    CudaSharedMemoryUnregister: unary(() => ({})),
    TraceSetting: unary((r: { settings: Record<string, unknown>; model_name: string }) => {
      if (r.model_name !== '') findModel(state, r.model_name, '');
      if (Object.keys(r.settings ?? {}).length > 0) throw new V2Error(grpc.status.UNIMPLEMENTED, 'trace settings cannot be changed on this server (tracing follows the OpenTelemetry configuration)');
      return { settings: { trace_level: { value: ['OFF'] }, trace_rate: { value: ['1000'] }, trace_count: { value: ['-1'] }, log_frequency: { value: ['0'] }, trace_file: { value: [] }, trace_mode: { value: ['triton'] } } };
    }),
    LogSettings: unary((r: { settings: Record<string, unknown> }) => {
      if (Object.keys(r.settings ?? {}).length > 0) throw new V2Error(grpc.status.UNIMPLEMENTED, 'log settings cannot be changed on this server (set LOG_LEVEL at start)');
      return { settings: LOG_SETTINGS };
    }),
  };
}
