/**
 * Reads a TensorFlow.js graph model (model.json + binary weight shards) from disk into
 * plain typed arrays, without TensorFlow.js itself: the converter only needs the graph's
 * nodes and the dequantized weights.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** One attribute value of a TF NodeDef, as the graph model JSON spells it. */
export interface TfAttr {
  s?: string; // base64
  i?: string | number;
  f?: number;
  b?: boolean;
  type?: string;
  shape?: { dim?: Array<{ size?: string | number }>; unknownRank?: boolean };
  list?: { s?: string[]; i?: Array<string | number>; f?: number[]; type?: string[] };
  tensor?: { dtype?: string; tensorShape?: { dim?: Array<{ size?: string | number }> } };
}

export interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

export interface WeightEntry {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; original_dtype?: string; scale?: number; min?: number };
}

export interface GraphModelJson {
  format?: string;
  signature?: {
    inputs?: Record<string, { name: string; dtype?: string }>;
    outputs?: Record<string, { name: string; dtype?: string }>;
  };
  modelTopology: { node: TfNode[] };
  weightsManifest: Array<{ paths: string[]; weights: WeightEntry[] }>;
}

export type WeightData = Float32Array | Int32Array | Uint8Array;

export interface Weight {
  dtype: 'float32' | 'int32' | 'bool';
  shape: number[];
  data: WeightData;
}

export interface LoadedGraphModel {
  json: GraphModelJson;
  nodes: TfNode[];
  weights: Map<string, Weight>;
}

export class GraphModelError extends Error {
  override readonly name = 'GraphModelError';
}

/** Loads model.json and its shards (resolved next to it) and dequantizes the weights. */
export async function loadGraphModel(jsonPath: string): Promise<LoadedGraphModel> {
  let json: GraphModelJson;
  try {
    json = JSON.parse(await readFile(jsonPath, 'utf8')) as GraphModelJson;
  } catch (err) {
    throw new GraphModelError(`cannot read the graph model ${jsonPath}: ${(err as Error).message}`, { cause: err });
  }
  if (!json?.modelTopology?.node || !Array.isArray(json.weightsManifest)) {
    throw new GraphModelError(`${jsonPath}: not a TensorFlow.js graph model (no modelTopology.node / weightsManifest)`);
  }
  const dir = path.dirname(jsonPath);
  const weights = new Map<string, Weight>();
  for (const group of json.weightsManifest) {
    const shards = await Promise.all(
      group.paths.map((p) =>
        readFile(path.join(dir, p)).catch((err: Error) => {
          throw new GraphModelError(`cannot read weight shard ${p} of ${jsonPath}: ${err.message}`, { cause: err });
        }),
      ),
    );
    decodeWeights(group.weights, Buffer.concat(shards), weights, jsonPath);
  }
  return { json, nodes: json.modelTopology.node, weights };
}

/** Decodes one weight group's concatenated shards into `out`. */
export function decodeWeights(entries: WeightEntry[], buf: Buffer, out: Map<string, Weight>, source = 'weights'): void {
  let offset = 0;
  for (const w of entries) {
    const count = w.shape.reduce((a, b) => a * b, 1);
    const q = w.quantization;
    const storedDtype = q ? q.dtype : w.dtype;
    const bytesPer = BYTES_PER[storedDtype];
    if (bytesPer === undefined) throw new GraphModelError(`${source}: weight ${w.name} has unsupported stored dtype ${storedDtype}`);
    const size = count * bytesPer;
    if (offset + size > buf.length) throw new GraphModelError(`${source}: weight shards end before weight ${w.name}`);
    // Copy so the typed array is aligned whatever the offset inside the shard.
    const bytes = new Uint8Array(buf.subarray(offset, offset + size));
    offset += size;
    out.set(w.name, { dtype: normalizeDtype(w.dtype, w.name, source), shape: w.shape, data: decodeOne(w, bytes, count, source) });
  }
  if (offset !== buf.length) throw new GraphModelError(`${source}: ${buf.length - offset} bytes of weight shards left over`);
}

const BYTES_PER: Record<string, number> = { float32: 4, int32: 4, bool: 1, float16: 2, uint8: 1, uint16: 2 };

function normalizeDtype(dtype: string, name: string, source: string): Weight['dtype'] {
  if (dtype === 'float32' || dtype === 'int32' || dtype === 'bool') return dtype;
  throw new GraphModelError(`${source}: weight ${name} has unsupported dtype ${dtype}`);
}

function decodeOne(w: WeightEntry, bytes: Uint8Array, count: number, source: string): WeightData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const q = w.quantization;
  if (!q) {
    if (w.dtype === 'float32') return new Float32Array(bytes.buffer, bytes.byteOffset, count).slice();
    if (w.dtype === 'int32') return new Int32Array(bytes.buffer, bytes.byteOffset, count).slice();
    return bytes;
  }
  if (q.dtype === 'float16') {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
    return w.dtype === 'int32' ? Int32Array.from(out, Math.round) : out;
  }
  if (q.dtype === 'uint8' || q.dtype === 'uint16') {
    // Affine quantization: value = stored * scale + min.
    if (typeof q.scale !== 'number' || typeof q.min !== 'number') throw new GraphModelError(`${source}: weight ${w.name}: ${q.dtype} quantization without scale/min`);
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (q.dtype === 'uint8' ? view.getUint8(i) : view.getUint16(i * 2, true)) * q.scale + q.min;
    return w.dtype === 'int32' ? Int32Array.from(out, Math.round) : out;
  }
  throw new GraphModelError(`${source}: weight ${w.name} has unsupported quantization ${q.dtype}`);
}

/** IEEE 754 binary16 → number (exact: every half value is representable in float32). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24; // zero and subnormals
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
