/**
 * Runs a TensorFlow.js graph model from local files with the tfjs CPU backend: the
 * reference the converted ONNX model is checked against. No network: the weights come
 * through an in-memory IOHandler.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import type { GraphModelJson } from '../../tools/model/tfjs-graph.js';

let backendReady: Promise<boolean> | undefined;

export async function loadTfjsModel(jsonPath: string): Promise<GraphModel> {
  backendReady ??= tf.setBackend('cpu');
  await backendReady;
  const json = JSON.parse(await readFile(jsonPath, 'utf8')) as GraphModelJson & Record<string, unknown>;
  const shards = await Promise.all(json.weightsManifest.flatMap((g) => g.paths).map((p) => readFile(path.join(path.dirname(jsonPath), p))));
  const bin = Buffer.concat(shards);
  const handler: tf.io.IOHandler = {
    load: async () => ({
      modelTopology: json.modelTopology as unknown as tf.io.ModelArtifacts['modelTopology'],
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights) as tf.io.WeightsManifestEntry[],
      weightData: bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength),
      format: json.format,
      signature: json.signature as object,
    }),
  };
  return loadGraphModel(handler);
}

/** Executes the graph on one input; returns each requested output as a flat array and shape. */
export async function runTfjs(
  model: GraphModel,
  inputName: string,
  input: { data: Float32Array; shape: number[] },
  outputs: string[],
  dtype: 'float32' | 'int32' = 'float32',
): Promise<Array<{ data: Float32Array | Int32Array | Uint8Array; shape: number[] }>> {
  const x = tf.tensor(dtype === 'int32' ? Int32Array.from(input.data) : input.data, input.shape, dtype);
  try {
    const result = await model.executeAsync({ [inputName]: x }, outputs);
    const list = Array.isArray(result) ? result : [result];
    const out = await Promise.all(list.map(async (t) => ({ data: await t.data<'float32' | 'int32' | 'bool'>(), shape: t.shape })));
    list.forEach((t) => t.dispose());
    return out;
  } finally {
    x.dispose();
  }
}
