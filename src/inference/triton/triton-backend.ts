/**
 * InferenceBackend over KServe v2 gRPC: NVIDIA Triton in production, or this service's
 * own v2 server (src/inference/v2-server) where there is no Triton. Shapes and datatypes
 * come from the server's ModelMetadata; tensors travel as raw little-endian bytes.
 */
import { status as Status } from '@grpc/grpc-js';
import { retry } from '../../backoff.js';
import { InferenceError, type InferenceBackend, type InferOptions, type ModelMetadata, type Tensor, type TensorSpec } from '../backend.js';
import { TritonClient, type TritonClientOptions } from './client.js';
import type { ModelInferRequest, TensorMetadataMsg } from './messages.js';
import { decodeTensorData, encodeTensorData, isTensorDataType } from './tensor-codec.js';

export interface TritonBackendOptions {
  /** host:port of the gRPC endpoint. */
  url: string;
  modelName: string;
  /** Empty or undefined: the version the server's policy picks (the latest). */
  modelVersion?: string;
  /** Deadline of health calls (ready()), ms. */
  healthTimeoutMs?: number;
  /** How long start() keeps trying to reach a server that is not up yet, ms. */
  startTimeoutMs?: number;
  client?: Omit<TritonClientOptions, 'url'>;
}

export class TritonBackend implements InferenceBackend {
  readonly kind = 'triton' as const;
  readonly client: TritonClient;
  private readonly modelName: string;
  private readonly modelVersion: string;
  private readonly healthTimeoutMs: number;
  private readonly startTimeoutMs: number;
  private meta: ModelMetadata | undefined;
  private batchLimit: number | undefined;
  private requestSeq = 0;
  /** Aborted by close(): a start still polling gives up at once instead of at its timeout. */
  private readonly closing = new AbortController();

  constructor(options: TritonBackendOptions) {
    this.client = new TritonClient({ ...options.client, url: options.url });
    this.modelName = options.modelName;
    this.modelVersion = options.modelVersion ?? '';
    this.healthTimeoutMs = options.healthTimeoutMs ?? 2_000;
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
  }

  /** Waits (bounded) until the model is ready, then reads its metadata. */
  async start(): Promise<void> {
    const attempt = async (): Promise<void> => {
      if (!(await this.ready())) throw new InferenceError('MODEL_NOT_READY', `model ${this.describeModel()} is not ready on ${this.client.url}`);
      const deadline = Date.now() + this.healthTimeoutMs;
      this.meta = toModelMetadata(await this.client.modelMetadata(this.modelName, this.modelVersion, { deadline }), this.modelVersion);
      this.batchLimit = await this.readMaxBatchSize(deadline);
    };
    try {
      // A steady poll: a server still loading a model answers cheaply, and readiness is wanted at once.
      await retry(attempt, { retryable: () => true, until: Date.now() + this.startTimeoutMs, signal: this.closing.signal, baseMs: 500, capMs: 500 });
    } catch (last) {
      if (this.closing.signal.aborted) throw new InferenceError('UNAVAILABLE', `closed while waiting for Triton at ${this.client.url}`, { cause: last });
      const reason = last instanceof Error ? last.message : String(last);
      throw new InferenceError(last instanceof InferenceError ? last.code : 'UNAVAILABLE', `Triton at ${this.client.url} not ready after ${this.startTimeoutMs} ms: ${reason}`, { cause: last });
    }
  }

  /**
   * max_batch_size from the server's ModelConfig (0: no batch dimension); undefined when the
   * server does not implement ModelConfig (it is a Triton extension of the v2 protocol).
   */
  get maxBatchSize(): number | undefined {
    return this.batchLimit;
  }

  metadata(): ModelMetadata {
    if (!this.meta) throw new InferenceError('MODEL_NOT_READY', 'TritonBackend.metadata() called before start()');
    return this.meta;
  }

  /** ServerReady && ModelReady; any failure (unreachable, unknown model) is "not ready". */
  async ready(): Promise<boolean> {
    const deadline = Date.now() + this.healthTimeoutMs;
    try {
      if (!(await this.client.serverReady({ deadline }))) return false;
      return await this.client.modelReady(this.modelName, this.modelVersion, { deadline });
    } catch {
      return false;
    }
  }

  async infer(inputs: Tensor[], options: InferOptions = {}): Promise<Map<string, Tensor>> {
    const meta = this.metadata();
    const request = this.buildRequest(inputs, meta);
    const response = await this.client.modelInfer(request, { deadline: options.deadline, signal: options.signal });
    if (response.raw_output_contents.length !== response.outputs.length) {
      throw new InferenceError('INTERNAL', `${this.describeModel()}: ${response.outputs.length} outputs but ${response.raw_output_contents.length} raw contents (typed contents are not read)`);
    }
    const outputs = new Map<string, Tensor>();
    response.outputs.forEach((o, i) => {
      if (!isTensorDataType(o.datatype)) throw new InferenceError('INTERNAL', `${this.describeModel()}: output ${o.name} has unsupported datatype ${o.datatype}`);
      try {
        outputs.set(o.name, decodeTensorData(o.name, o.datatype, o.shape.map(Number), response.raw_output_contents[i]));
      } catch (err) {
        throw new InferenceError('INTERNAL', `${this.describeModel()}: ${(err as Error).message}`, { cause: err });
      }
    });
    for (const spec of meta.outputs) {
      if (!outputs.has(spec.name)) throw new InferenceError('INTERNAL', `${this.describeModel()}: the response lacks output ${spec.name}`);
    }
    return outputs;
  }

  async close(): Promise<void> {
    this.closing.abort();
    this.client.close();
  }

  /** Checks the inputs against the model metadata before anything is sent. */
  private buildRequest(inputs: Tensor[], meta: ModelMetadata): ModelInferRequest {
    const byName = new Map(inputs.map((t) => [t.name, t]));
    if (byName.size !== inputs.length) throw new InferenceError('INVALID_INPUT', 'the same input is given twice');
    const raw: Buffer[] = [];
    const tensors = meta.inputs.map((spec) => {
      const t = byName.get(spec.name);
      if (!t) throw new InferenceError('INVALID_INPUT', `missing input ${spec.name} of model ${meta.name}`);
      checkAgainstSpec(t, spec);
      try {
        raw.push(encodeTensorData(t));
      } catch (err) {
        throw new InferenceError('INVALID_INPUT', (err as Error).message, { cause: err });
      }
      return { name: t.name, datatype: t.datatype, shape: t.shape };
    });
    for (const t of inputs) {
      if (!meta.inputs.some((s) => s.name === t.name)) throw new InferenceError('INVALID_INPUT', `model ${meta.name} has no input ${t.name}`);
    }
    return {
      model_name: this.modelName,
      model_version: this.modelVersion,
      id: String(++this.requestSeq),
      inputs: tensors,
      outputs: meta.outputs.map((o) => ({ name: o.name })),
      raw_input_contents: raw,
    };
  }

  private async readMaxBatchSize(deadline: number): Promise<number | undefined> {
    try {
      return (await this.client.modelConfig(this.modelName, this.modelVersion, { deadline })).max_batch_size;
    } catch (err) {
      const cause = (err as { cause?: { code?: number } }).cause;
      if (cause?.code === Status.UNIMPLEMENTED) return undefined;
      throw err;
    }
  }

  private describeModel(): string {
    return this.modelVersion ? `${this.modelName} v${this.modelVersion}` : this.modelName;
  }
}

function checkAgainstSpec(t: Tensor, spec: TensorSpec): void {
  if (t.datatype !== spec.datatype) throw new InferenceError('INVALID_INPUT', `input ${t.name}: datatype ${t.datatype}, the model expects ${spec.datatype}`);
  const fits = t.shape.length === spec.shape.length && spec.shape.every((d, i) => d < 0 || d === t.shape[i]);
  if (!fits) throw new InferenceError('INVALID_INPUT', `input ${t.name}: shape [${t.shape.join(',')}], the model expects [${spec.shape.join(',')}]`);
}

function toSpec(m: TensorMetadataMsg, model: string): TensorSpec {
  if (!isTensorDataType(m.datatype)) throw new InferenceError('INTERNAL', `model ${model}: tensor ${m.name} has unsupported datatype ${m.datatype}`);
  return { name: m.name, datatype: m.datatype, shape: m.shape.map(Number) };
}

function toModelMetadata(r: { name: string; versions: string[]; platform: string; inputs: TensorMetadataMsg[]; outputs: TensorMetadataMsg[] }, requested: string): ModelMetadata {
  // Triton lists the loaded versions; without a requested one it serves the highest.
  const version = requested || [...r.versions].sort((a, b) => Number(b) - Number(a))[0] || '';
  return {
    name: r.name,
    version,
    platform: r.platform,
    inputs: r.inputs.map((m) => toSpec(m, r.name)),
    outputs: r.outputs.map((m) => toSpec(m, r.name)),
  };
}
