/**
 * One model of the repository as the v2 server serves it: its config.pbtxt, the version
 * on disk (the highest, Triton's default "latest" policy), the backend that runs it, the
 * dynamic batcher in front of that backend, and its statistics. Requests are checked
 * against config.pbtxt (names, datatypes, shapes, byte sizes) before they are queued.
 */
import { status as Status } from '@grpc/grpc-js';
import type { InferenceBackend, Tensor, TensorDataType } from '../backend.js';
import type { InferTensorContents, ModelConfigMsg, ModelInferRequest, ModelInferResponse, ModelMetadataResponse, DataTypeEnum } from '../triton/messages.js';
import { decodeTensorData, elementCount, elementSize, encodeTensorData, isTensorDataType } from '../triton/tensor-codec.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import { V2Error, invalid, requestIdPrefix, unavailable, unknownVersion } from './errors.js';
import { ModelStatistics } from './statistics.js';

export interface TensorConfig {
  name: string;
  datatype: TensorDataType;
  /** Without the batch dimension when maxBatchSize > 0; -1 = any size. */
  dims: number[];
  /** The model's own shape when clients see `dims` instead (config.pbtxt `reshape`). */
  reshape?: number[];
}

/** What the v2 server reads from a model's config.pbtxt. */
export interface ServedModelConfig {
  name: string;
  platform: string;
  backend: string;
  /** 0: no batch dimension; the inputs are exactly `dims`. */
  maxBatchSize: number;
  inputs: TensorConfig[];
  outputs: TensorConfig[];
  /** Executions at a time (instance_group count, default 1). */
  instanceCount: number;
  /** Present when config.pbtxt has a dynamic_batching block. */
  dynamicBatching?: { maxQueueDelayUs: number; preferredBatchSizes: number[] };
  defaultModelFilename: string;
}

export interface ServedModelOptions {
  config: ServedModelConfig;
  version: string;
  backend: InferenceBackend;
  /** Overrides config.pbtxt's max_queue_delay_microseconds (µs). */
  maxQueueDelayUs?: number;
  maxQueueSize?: number;
}

/** Triton's hint after a shape error of a batching model (clients see the same text from both servers). */
const BATCH_DIM_NOTE =
  '. NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. ' +
  'If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. ' +
  'See the model configuration docs for more info on max_batch_size.';

export class ServedModel {
  readonly config: ServedModelConfig;
  readonly version: string;
  readonly stats: ModelStatistics;
  readonly batcher: DynamicBatcher;
  private readonly backend: InferenceBackend;
  private ready = false;
  private active = 0;

  constructor(options: ServedModelOptions) {
    this.config = options.config;
    this.version = options.version;
    this.backend = options.backend;
    this.stats = new ModelStatistics(this.config.name, this.version);
    const cfg = this.config;
    this.batcher = new DynamicBatcher({
      maxBatchSize: cfg.maxBatchSize,
      // Without a dynamic_batching block Triton still runs one request at a time; here the
      // requests that queue up meanwhile are gathered (delay 0) so the server never idles.
      maxQueueDelayUs: options.maxQueueDelayUs ?? cfg.dynamicBatching?.maxQueueDelayUs ?? 0,
      preferredBatchSize: cfg.dynamicBatching?.preferredBatchSizes.length ? Math.max(...cfg.dynamicBatching.preferredBatchSizes) : undefined,
      maxQueueSize: options.maxQueueSize ?? 1024,
      concurrency: Math.max(1, cfg.instanceCount),
      run: (inputs) => this.backend.infer(inputs),
      onExecuted: (rows, ns) => this.stats.executed(rows, ns),
    });
  }

  get name(): string {
    return this.config.name;
  }

  async load(): Promise<void> {
    await this.backend.start();
    this.ready = await this.backend.ready();
  }

  isReady(): boolean {
    return this.ready;
  }

  /** Inference requests accepted and not yet answered (queued or running). */
  get inFlight(): number {
    return this.active;
  }

  /** Stops taking requests; lets those queued and running finish. */
  async drain(): Promise<void> {
    this.ready = false;
    await this.batcher.idle();
  }

  async unload(): Promise<void> {
    this.ready = false;
    this.batcher.abortQueued(`model ${this.name} is unloading`);
    await this.backend.close();
  }

  /** Throws NOT_FOUND unless `version` is empty or the one served. */
  checkVersion(version: string): void {
    if (version !== '' && version !== this.version) throw unknownVersion(this.name, version);
  }

  metadata(): ModelMetadataResponse {
    const batch = this.config.maxBatchSize > 0 ? [-1] : [];
    const meta = (t: TensorConfig) => ({ name: t.name, datatype: t.datatype, shape: [...batch, ...t.dims] });
    return { name: this.name, versions: [this.version], platform: this.config.platform, inputs: this.config.inputs.map(meta), outputs: this.config.outputs.map(meta) };
  }

  modelConfig(): ModelConfigMsg {
    const c = this.config;
    const msg = (t: TensorConfig) => ({ name: t.name, data_type: `TYPE_${t.datatype}` as DataTypeEnum, dims: t.dims, ...(t.reshape ? { reshape: { shape: t.reshape } } : {}) });
    return {
      name: c.name,
      platform: c.platform,
      backend: c.backend,
      max_batch_size: c.maxBatchSize,
      input: c.inputs.map(msg),
      output: c.outputs.map(msg),
      instance_group: [{ name: `${c.name}_0`, count: c.instanceCount, kind: 'KIND_CPU' }],
      default_model_filename: c.defaultModelFilename,
      dynamic_batching: c.dynamicBatching ? { preferred_batch_size: c.dynamicBatching.preferredBatchSizes, max_queue_delay_microseconds: c.dynamicBatching.maxQueueDelayUs } : null,
    };
  }

  /** Bytes of the largest valid request (for the server's message size limit). */
  maxRequestBytes(): number {
    const rows = Math.max(1, this.config.maxBatchSize);
    return this.config.inputs.reduce((n, t) => n + (t.dims.some((d) => d < 0) ? 0 : rows * elementCount(t.dims) * elementSize(t.datatype)), 0);
  }

  async infer(request: ModelInferRequest, signal?: AbortSignal): Promise<ModelInferResponse> {
    const started = process.hrtime.bigint();
    if (!this.ready) throw unavailable(`model ${this.name} is not ready`);
    this.checkVersion(request.model_version);
    // Malformed requests are the caller's error, not the model's: not counted as failures.
    const inputs = this.decodeInputs(request);
    const wanted = this.requestedOutputs(request);
    this.active++;
    try {
      const { outputs, queueNs } = await this.batcher.submit(inputs, signal);
      const response: ModelInferResponse = { model_name: this.name, model_version: this.version, id: request.id, outputs: [], raw_output_contents: [] };
      for (const name of wanted) {
        const t = outputs.get(name);
        if (!t) throw new V2Error(Status.INTERNAL, `the model produced no output ${name}`);
        const shown = this.clientShape(name, t);
        response.outputs.push({ name, datatype: t.datatype, shape: shown.shape });
        response.raw_output_contents.push(encodeTensorData(shown));
      }
      const rows = this.config.maxBatchSize > 0 ? inputs[0].shape[0] : 1;
      this.stats.requestSucceeded(rows, Number(process.hrtime.bigint() - started), queueNs);
      return response;
    } catch (err) {
      this.stats.requestFailed(Number(process.hrtime.bigint() - started));
      throw err;
    } finally {
      this.active--;
    }
  }

  private decodeInputs(request: ModelInferRequest): Tensor[] {
    const cfg = this.config;
    const raw = request.raw_input_contents ?? [];
    if (raw.length !== 0 && raw.length !== request.inputs.length) {
      throw invalid(`${request.inputs.length} inputs but ${raw.length} raw_input_contents; give one per input, in the same order`);
    }
    // Triton's wording, so that clients and tests can rely on the same messages.
    const prefix = requestIdPrefix(request.id);
    const seen = new Set<string>();
    let rows: number | undefined;
    const tensors = request.inputs.map((msg, i) => {
      const spec = cfg.inputs.find((s) => s.name === msg.name);
      if (!spec) throw invalid(`unexpected inference input '${msg.name}' for model '${this.name}'`);
      if (seen.has(msg.name)) throw invalid(`input '${msg.name}' is given twice`);
      seen.add(msg.name);
      if (msg.datatype !== spec.datatype) throw invalid(`${prefix}inference input '${msg.name}' data-type is '${msg.datatype}', but model '${this.name}' expects '${spec.datatype}'`);
      const shape = msg.shape.map(Number);
      this.checkShape(msg.name, shape, spec, prefix);
      if (cfg.maxBatchSize > 0) {
        if (rows !== undefined && shape[0] !== rows) throw invalid(`inputs have different batch sizes (${rows} and ${shape[0]})`);
        rows = shape[0];
      }
      const bytes = raw.length > 0 ? raw[i] : fromContents(msg.name, spec.datatype, msg.contents ?? undefined);
      const expected = elementCount(shape) * elementSize(spec.datatype);
      if (bytes.byteLength !== expected) {
        throw invalid(`input '${msg.name}': ${bytes.byteLength} bytes of data, but ${spec.datatype} [${shape.join(',')}] needs ${expected}`);
      }
      // The model gets its own shape; clients send the declared one (same elements).
      const modelShape = spec.reshape ? [...(cfg.maxBatchSize > 0 ? [shape[0]] : []), ...spec.reshape] : shape;
      return decodeTensorData(msg.name, spec.datatype, modelShape, bytes);
    });
    for (const spec of cfg.inputs) {
      if (!seen.has(spec.name)) throw invalid(`expected ${cfg.inputs.length} inputs but got ${request.inputs.length}: missing '${spec.name}' for model '${this.name}'`);
    }
    return tensors;
  }

  /** An output with a reshape is shown to clients in its declared dims (after the batch). */
  private clientShape(name: string, t: Tensor): Tensor {
    const spec = this.config.outputs.find((s) => s.name === name);
    if (!spec?.reshape || spec.dims.includes(-1)) return t;
    return { ...t, shape: [...(this.config.maxBatchSize > 0 ? [t.shape[0]] : []), ...spec.dims] };
  }

  private checkShape(name: string, shape: number[], spec: TensorConfig, prefix: string): void {
    const cfg = this.config;
    const expected = cfg.maxBatchSize > 0 ? ['-1', ...spec.dims.map(String)] : spec.dims.map(String);
    const note = cfg.maxBatchSize > 0 ? BATCH_DIM_NOTE : '';
    const describe = `${prefix}unexpected shape for input '${name}' for model '${this.name}'. Expected [${expected.join(',')}], got [${shape.join(',')}]${note}`;
    if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw invalid(describe);
    const dims = cfg.maxBatchSize > 0 ? shape.slice(1) : shape;
    if (cfg.maxBatchSize > 0) {
      if (shape.length === 0) throw invalid(describe);
      if (shape[0] > cfg.maxBatchSize) throw invalid(`${prefix}inference request batch-size must be <= ${cfg.maxBatchSize} for '${this.name}'`);
      if (shape[0] < 1) throw invalid(`${prefix}inference request batch-size must be >= 1 for '${this.name}'`);
    }
    if (dims.length !== spec.dims.length || !spec.dims.every((d, i) => d < 0 || d === dims[i])) throw invalid(describe);
  }

  private requestedOutputs(request: ModelInferRequest): string[] {
    if (!request.outputs || request.outputs.length === 0) return this.config.outputs.map((o) => o.name);
    return request.outputs.map((o) => {
      if (!this.config.outputs.some((s) => s.name === o.name)) throw invalid(`unexpected inference output '${o.name}' for model '${this.name}'`);
      return o.name;
    });
  }
}

/** Typed contents (InferTensorContents) → little-endian bytes, for clients that do not send raw. */
function fromContents(name: string, datatype: TensorDataType, c: InferTensorContents | undefined): Uint8Array {
  const pick = (): ArrayLike<number | bigint> | undefined => {
    switch (datatype) {
      case 'FP32':
        return c?.fp32_contents && Float32Array.from(c.fp32_contents);
      case 'INT32':
        return c?.int_contents && Int32Array.from(c.int_contents);
      case 'INT64':
        return c?.int64_contents && BigInt64Array.from(c.int64_contents.map((v) => BigInt(v)));
      case 'UINT8':
        return c?.uint_contents && Uint8Array.from(c.uint_contents);
      case 'BOOL':
        return c?.bool_contents && Uint8Array.from(c.bool_contents.map((b) => (b ? 1 : 0)));
      default:
        return undefined; // FP16 has no typed field in the protocol: raw only
    }
  };
  const arr = pick() as (Float32Array | Int32Array | BigInt64Array | Uint8Array) | undefined;
  if (!arr) throw invalid(`input '${name}': no data (send raw_input_contents${datatype === 'FP16' ? '' : ` or contents of type ${datatype}`})`);
  return new Uint8Array(encodeTensorData({ name, datatype, shape: [arr.length], data: arr }));
}

export function tensorDatatypeOf(dataType: string): TensorDataType {
  const short = dataType.replace(/^TYPE_/, '');
  if (!isTensorDataType(short)) throw new Error(`data type ${dataType} is not supported by this server`);
  return short;
}
