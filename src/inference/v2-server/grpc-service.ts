/**
 * The gRPC handlers of inference.GRPCInferenceService over the served models. Errors go
 * out as gRPC statuses: NOT_FOUND for an unknown model or version, INVALID_ARGUMENT for a
 * malformed request, UNAVAILABLE while loading or shutting down, RESOURCE_EXHAUSTED when
 * the queue is full, CANCELLED / DEADLINE_EXCEEDED as the client asked.
 */
import * as grpc from '@grpc/grpc-js';
import { InferenceError } from '../backend.js';
import type { ModelInferRequest, ModelStatisticsMsg } from '../triton/messages.js';
import { V2Error, notFound } from './errors.js';
import type { ServedModel } from './served-model.js';

export interface ServerState {
  live(): boolean;
  ready(): boolean;
  model(name: string): ServedModel | undefined;
  models(): ServedModel[];
}

type Handler = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

const INFERENCE_TO_GRPC: Record<InferenceError['code'], grpc.status> = {
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  DEADLINE_EXCEEDED: grpc.status.DEADLINE_EXCEEDED,
  MODEL_NOT_READY: grpc.status.UNAVAILABLE,
  INVALID_INPUT: grpc.status.INVALID_ARGUMENT,
  RESOURCE_EXHAUSTED: grpc.status.RESOURCE_EXHAUSTED,
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

export function inferenceHandlers(state: ServerState): grpc.UntypedServiceImplementation {
  const find = (name: string, version: string): ServedModel => {
    const m = state.model(name);
    if (!m) throw notFound(`Request for unknown model: '${name}' is not found`);
    m.checkVersion(version);
    return m;
  };
  return {
    ServerLive: unary(() => ({ live: state.live() })),
    ServerReady: unary(() => ({ ready: state.ready() })),
    // An unknown model is "not ready", not an error: readiness probes only want a yes or no.
    ModelReady: unary((r: { name: string; version: string }) => {
      const m = state.model(r.name);
      return { ready: state.ready() && !!m && m.isReady() && (r.version === '' || r.version === m.version) };
    }),
    ModelMetadata: unary((r: { name: string; version: string }) => find(r.name, r.version).metadata()),
    ModelConfig: unary((r: { name: string; version: string }) => ({ config: find(r.name, r.version).modelConfig() })),
    ModelStatistics: unary((r: { name: string; version: string }) => {
      const models = r.name === '' ? state.models() : [find(r.name, r.version)];
      return { model_stats: models.map((m): ModelStatisticsMsg => m.stats.snapshot()) };
    }),
    ModelInfer: unary(async (r: ModelInferRequest, call) => {
      const model = find(r.model_name, r.model_version);
      // A client that cancels or whose deadline passes leaves the queue without running.
      const abort = new AbortController();
      const onCancel = (): void => abort.abort();
      call.once('cancelled', onCancel);
      try {
        return await model.infer(r, abort.signal);
      } finally {
        call.removeListener('cancelled', onCancel);
      }
    }),
  };
}
