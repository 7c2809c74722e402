/** Chooses the inference backend from the configuration (composition root helper). */
import path from 'node:path';
import type { Config } from '../config.js';
import type { InferenceBackend } from './backend.js';
import { OnnxRuntimeBackend } from './onnxruntime-backend.js';

/** Not started: the caller runs start() and close(). */
export async function createInferenceBackend(config: Config): Promise<InferenceBackend> {
  // TRITON_URL set: NVIDIA Triton (or `recog inference-server`) over KServe v2 gRPC. gRPC and
  // the protobuf definitions are loaded only then: embedded, they would be heap (about 3 MB)
  // for every full garbage collection to walk (docs/performance.md, issue 30).
  if (config.tritonUrl) {
    const { TritonBackend } = await import('./triton/triton-backend.js');
    return new TritonBackend({ url: config.tritonUrl, modelName: config.tritonModelName, modelVersion: config.tritonModelVersion });
  }
  return new OnnxRuntimeBackend({
    modelPath: path.join(config.modelRepository, config.modelName, '1', 'model.onnx'),
    modelName: config.modelName,
    modelVersion: '1',
    threads: config.inferenceThreads,
    maxBatch: config.inferenceMaxBatch,
  });
}
