/**
 * Constant folding for the converter: small N-d array operations on plain typed arrays,
 * used when every input of a TF op is known at conversion time (anchor tables, shapes of
 * tensors whose per-sample shape is fixed). The folded result becomes an ONNX initializer.
 */
import type { WeightData } from './tfjs-graph.js';

export interface ConstArray {
  shape: number[];
  data: WeightData;
}

function count(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function stridesOf(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

function like(data: WeightData, n: number): WeightData {
  return data instanceof Float32Array ? new Float32Array(n) : data instanceof Int32Array ? new Int32Array(n) : new Uint8Array(n);
}

/** out[i] = x[source(index of i)]: the one loop behind transpose, tile, slice. */
function gatherBy(x: ConstArray, outShape: number[], source: (idx: number[]) => number[]): ConstArray {
  const n = count(outShape);
  const out = like(x.data, n);
  const inStrides = stridesOf(x.shape);
  const idx = new Array<number>(outShape.length).fill(0);
  for (let i = 0; i < n; i++) {
    const src = source(idx);
    let off = 0;
    for (let d = 0; d < src.length; d++) off += src[d] * inStrides[d];
    out[i] = x.data[off];
    for (let d = outShape.length - 1; d >= 0; d--) {
      if (++idx[d] < outShape[d]) break;
      idx[d] = 0;
    }
  }
  return { shape: outShape, data: out };
}

export function transpose(x: ConstArray, perm: number[]): ConstArray {
  const outShape = perm.map((p) => x.shape[p]);
  return gatherBy(x, outShape, (idx) => {
    const src = new Array<number>(perm.length);
    perm.forEach((p, i) => (src[p] = idx[i]));
    return src;
  });
}

export function tile(x: ConstArray, multiples: number[]): ConstArray {
  return gatherBy(x, x.shape.map((d, i) => d * multiples[i]), (idx) => idx.map((v, i) => v % x.shape[i]));
}

/** Slice with per-axis start and step (size = the output shape). */
export function slice(x: ConstArray, starts: number[], steps: number[], outShape: number[]): ConstArray {
  return gatherBy(x, outShape, (idx) => idx.map((v, i) => starts[i] + v * steps[i]));
}

/** Element-wise op with numpy/TF broadcasting. */
export function broadcastBinary(a: ConstArray, b: ConstArray, f: (x: number, y: number) => number): ConstArray {
  const r = Math.max(a.shape.length, b.shape.length);
  const pa = [...new Array<number>(r - a.shape.length).fill(1), ...a.shape];
  const pb = [...new Array<number>(r - b.shape.length).fill(1), ...b.shape];
  const shape = pa.map((d, i) => Math.max(d, pb[i]));
  const sa = stridesOf(pa);
  const sb = stridesOf(pb);
  const n = count(shape);
  const out = like(a.data, n);
  const idx = new Array<number>(r).fill(0);
  for (let i = 0; i < n; i++) {
    let oa = 0;
    let ob = 0;
    for (let d = 0; d < r; d++) {
      if (pa[d] !== 1) oa += idx[d] * sa[d];
      if (pb[d] !== 1) ob += idx[d] * sb[d];
    }
    out[i] = f(a.data[oa], b.data[ob]);
    for (let d = r - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return { shape, data: out };
}

/** Stacks equally shaped arrays along a new axis. */
export function pack(parts: ConstArray[], axis: number): ConstArray {
  const inner = parts[0].shape;
  const outShape = [...inner.slice(0, axis), parts.length, ...inner.slice(axis)];
  const joined: ConstArray = { shape: [parts.length, ...inner], data: like(parts[0].data, parts.length * count(inner)) };
  parts.forEach((p, i) => (joined.data as Float32Array).set(p.data, i * count(inner)));
  // joined is the pack along axis 0; move that axis into place.
  const perm = Array.from({ length: outShape.length }, (_, i) => i);
  perm.splice(0, 1);
  perm.splice(axis, 0, 0);
  return transpose(joined, perm);
}

export function unpack(x: ConstArray, axis: number): ConstArray[] {
  const outShape = x.shape.filter((_, i) => i !== axis);
  return Array.from({ length: x.shape[axis] }, (_, k) => {
    const starts = x.shape.map((_, i) => (i === axis ? k : 0));
    const sliced = slice(x, starts, x.shape.map(() => 1), x.shape.map((d, i) => (i === axis ? 1 : d)));
    return { shape: outShape, data: sliced.data };
  });
}
