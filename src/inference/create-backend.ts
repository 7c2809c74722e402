/** Chooses the inference backend from the configuration (composition root helper). */
import path from 'node:path';
import type { Config } from '../config.js';
import type { InferenceBackend } from './backend.js';
import { OnnxRuntimeBackend } from './onnxruntime-backend.js';
import { TritonBackend } from './triton/triton-backend.js';

/** Not started: the caller runs start() and close(). */
export function createInferenceBackend(config: Config): InferenceBackend {
  // TRITON_URL set: NVIDIA Triton (or `recog inference-server`) over KServe v2 gRPC.
  if (config.tritonUrl) return new TritonBackend({ url: config.tritonUrl, modelName: config.tritonModelName, modelVersion: config.tritonModelVersion });
  return new OnnxRuntimeBackend({
    modelPath: path.join(config.modelRepository, config.modelName, '1', 'model.onnx'),
    modelName: config.modelName,
    modelVersion: '1',
    threads: config.inferenceThreads,
    maxBatch: config.inferenceMaxBatch,
  });
}
