/**
 * `recog inference-server`: the local KServe v2 server (gRPC like Triton, plus HTTP
 * health and stats) over the prepared model repository, on the embedded ONNX Runtime.
 * Point the API at it with TRITON_URL=<host>:<port>.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.js';
import { OnnxRuntimeBackend } from '../../inference/onnxruntime-backend.js';
import { startV2Server, type V2Server, type V2ServerOptions } from '../../inference/v2-server/server.js';

export interface InferenceServerCommandOptions {
  host: string;
  port: number;
  httpPort: number;
  modelRepository: string;
  maxQueueDelayUs?: number;
  threads: number;
  shutdownTimeoutMs: number;
}

/** Starts the server with ONNX Runtime backends; the caller decides when to close it. */
export function startInferenceServer(o: InferenceServerCommandOptions, log: (m: string) => void): Promise<V2Server> {
  const options: V2ServerOptions = {
    modelRepository: o.modelRepository,
    host: o.host,
    grpcPort: o.port,
    httpPort: o.httpPort,
    maxQueueDelayUs: o.maxQueueDelayUs,
    createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: o.threads }),
    log,
  };
  return startV2Server(options);
}

/** Runs until SIGINT/SIGTERM, then shuts down gracefully (in-flight calls finish). */
export async function runInferenceServer(o: InferenceServerCommandOptions, log: (m: string) => void): Promise<void> {
  const server = await startInferenceServer(o, log);
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log(`${signal}: shutting down (up to ${o.shutdownTimeoutMs} ms for calls in flight)`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close({ graceMs: o.shutdownTimeoutMs });
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 10_000_000) throw new InvalidArgumentError('an integer from 0 to 10000000');
  return n;
}

export function register(program: Command): void {
  program
    .command('inference-server')
    .description('serve the model repository over KServe v2 gRPC and HTTP/REST (Triton-compatible) with dynamic batching')
    .option('--host <address>', 'interface to listen on', '0.0.0.0')
    .option('--port <port>', 'gRPC port', port, 8001)
    .option('--http-port <port>', 'HTTP/REST port (health, metadata, stats, inference, repository)', port, 8000)
    .option('--model-repository <dir>', 'Triton model repository (default: MODEL_REPOSITORY or ./model-repository)')
    .option('--max-queue-delay-us <n>', "how long a request may wait for a batch to fill (µs); default: the model's config.pbtxt", nonNegative)
    .option('--threads <n>', 'ONNX Runtime threads (default: INFERENCE_THREADS or all cores)', nonNegative)
    .action(async (opts: { host: string; port: number; httpPort: number; modelRepository?: string; maxQueueDelayUs?: number; threads?: number }) => {
      const config = loadConfig(process.env);
      const log = (m: string): void => void process.stderr.write(`inference-server: ${m}\n`);
      await runInferenceServer(
        {
          host: opts.host,
          port: opts.port,
          httpPort: opts.httpPort,
          modelRepository: opts.modelRepository ?? config.modelRepository,
          maxQueueDelayUs: opts.maxQueueDelayUs,
          threads: opts.threads || config.inferenceThreads,
          shutdownTimeoutMs: config.shutdownTimeoutMs,
        },
        log,
      );
    });
}
