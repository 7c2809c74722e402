/**
 * Builds small TensorFlow.js graph models (model.json + weights.bin) on disk, in the same
 * format as the shipped model, so each converter op can be checked against TF.js itself.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GraphModelJson, TfAttr, TfNode, WeightEntry } from '../../tools/model/tfjs-graph.js';

export const attr = {
  ints: (v: number[]): TfAttr => ({ list: { i: v.map(String) } }),
  str: (v: string): TfAttr => ({ s: Buffer.from(v).toString('base64') }),
  strs: (v: string[]): TfAttr => ({ list: { s: v.map((x) => Buffer.from(x).toString('base64')) } }),
  int: (v: number): TfAttr => ({ i: String(v) }),
  bool: (v: boolean): TfAttr => ({ b: v }),
  type: (v: string): TfAttr => ({ type: v }),
  float: (v: number): TfAttr => ({ f: v }),
};

/** Exact float → IEEE half for values a half can hold (the fixtures choose such values). */
export function floatToHalf(v: number): number {
  if (v === 0) return Object.is(v, -0) ? 0x8000 : 0;
  const sign = v < 0 ? 0x8000 : 0;
  const a = Math.abs(v);
  let exp = Math.floor(Math.log2(a));
  if (exp < -14) exp = -14; // subnormal range
  const frac = exp === -14 && a < 2 ** -14 ? Math.round(a / 2 ** -24) : Math.round((a / 2 ** exp - 1) * 1024);
  if (exp === -14 && a < 2 ** -14) return sign | frac;
  return sign | ((exp + 15) << 10) | frac;
}

export class GraphFixture {
  readonly nodes: TfNode[] = [];
  private readonly weights: WeightEntry[] = [];
  private readonly chunks: Buffer[] = [];

  placeholder(name: string, shape: number[]): string {
    this.nodes.push({ name, op: 'Placeholder', attr: { dtype: attr.type('DT_FLOAT'), shape: { shape: { dim: shape.map((d) => ({ size: String(d) })) } } } });
    return name;
  }

  /** A constant; float weights can be stored float16-quantized like the shipped model. */
  const(name: string, shape: number[], values: number[], dtype: 'float32' | 'int32' = 'float32', float16 = false): string {
    const count = shape.reduce((a, b) => a * b, 1);
    if (values.length !== count) throw new Error(`${name}: ${values.length} values for shape [${shape}]`);
    this.nodes.push({ name, op: 'Const', attr: { dtype: attr.type(dtype === 'float32' ? 'DT_FLOAT' : 'DT_INT32'), value: { tensor: { dtype: dtype === 'float32' ? 'DT_FLOAT' : 'DT_INT32' } } } });
    if (float16) {
      const b = Buffer.alloc(count * 2);
      values.forEach((v, i) => b.writeUInt16LE(floatToHalf(v), i * 2));
      this.chunks.push(b);
      this.weights.push({ name, shape, dtype, quantization: { dtype: 'float16', original_dtype: 'float32' } });
    } else {
      const b = Buffer.alloc(count * 4);
      values.forEach((v, i) => (dtype === 'float32' ? b.writeFloatLE(v, i * 4) : b.writeInt32LE(v, i * 4)));
      this.chunks.push(b);
      this.weights.push({ name, shape, dtype });
    }
    return name;
  }

  op(name: string, op: string, input: string[], attrs: Record<string, TfAttr> = {}): string {
    this.nodes.push({ name, op, input, attr: attrs });
    return name;
  }

  /** Writes model.json + weights.bin into a fresh temporary directory; returns the JSON path. */
  async write(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-graph-'));
    const json: GraphModelJson & { generatedBy: string; convertedBy: string } = {
      format: 'graph-model',
      generatedBy: 'test',
      convertedBy: 'test',
      modelTopology: { node: this.nodes, versions: {} } as GraphModelJson['modelTopology'],
      weightsManifest: [{ paths: ['weights.bin'], weights: this.weights }],
    };
    await writeFile(path.join(dir, 'model.json'), JSON.stringify(json));
    await writeFile(path.join(dir, 'weights.bin'), Buffer.concat(this.chunks));
    return path.join(dir, 'model.json');
  }
}

/** Deterministic pseudo-random values in [lo, hi), rounded to a step a half holds exactly. */
export function values(count: number, seed: number, lo = -1, hi = 1, step = 1 / 64): number[] {
  let s = seed >>> 0 || 1;
  return Array.from({ length: count }, () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return Math.round((lo + ((s / 2 ** 32) * (hi - lo))) / step) * step;
  });
}
