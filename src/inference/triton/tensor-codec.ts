/**
 * Tensors ⇄ the v2 protocol's raw bytes: flattened, row-major, little-endian, no padding
 * (what Triton expects in raw_input_contents and returns in raw_output_contents).
 */
import os from 'node:os';
import type { Tensor, TensorData, TensorDataType } from '../backend.js';

interface TypeInfo {
  bytes: number;
  make(buffer: ArrayBuffer, length: number): TensorData;
}

const TYPES: Record<TensorDataType, TypeInfo> = {
  FP32: { bytes: 4, make: (b, n) => new Float32Array(b, 0, n) },
  FP16: { bytes: 2, make: (b, n) => new Uint16Array(b, 0, n) },
  INT64: { bytes: 8, make: (b, n) => new BigInt64Array(b, 0, n) },
  INT32: { bytes: 4, make: (b, n) => new Int32Array(b, 0, n) },
  UINT8: { bytes: 1, make: (b, n) => new Uint8Array(b, 0, n) },
  BOOL: { bytes: 1, make: (b, n) => new Uint8Array(b, 0, n) },
};

const HOST_IS_LE = os.endianness() === 'LE';

export function isTensorDataType(s: string): s is TensorDataType {
  return Object.prototype.hasOwnProperty.call(TYPES, s);
}

export function elementSize(datatype: TensorDataType): number {
  return TYPES[datatype].bytes;
}

/** Number of elements of a fully known shape (every dimension ≥ 0). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Reverses the bytes of each element in place (big-endian hosts only). */
function swapInPlace(bytes: Uint8Array, width: number): void {
  if (width === 1) return;
  for (let i = 0; i < bytes.length; i += width) {
    for (let a = i, b = i + width - 1; a < b; a++, b--) {
      const t = bytes[a];
      bytes[a] = bytes[b]!;
      bytes[b] = t;
    }
  }
}

/** The tensor's data as little-endian bytes (a view, no copy, on little-endian hosts). */
export function encodeTensorData(tensor: Tensor): Buffer {
  const expected = elementCount(tensor.shape);
  if (tensor.data.length !== expected) {
    throw new RangeError(`tensor ${tensor.name}: ${tensor.data.length} elements for shape [${tensor.shape.join(',')}] (expected ${expected})`);
  }
  const view = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  if (HOST_IS_LE) return view;
  const copy = Buffer.from(view);
  swapInPlace(copy, TYPES[tensor.datatype].bytes);
  return copy;
}

/**
 * Builds a tensor from little-endian bytes. Copies into a fresh, aligned buffer: protobuf
 * hands out slices of the message at any byte offset, which typed arrays cannot view.
 */
export function decodeTensorData(name: string, datatype: TensorDataType, shape: number[], bytes: Uint8Array): Tensor {
  const info = TYPES[datatype];
  const count = elementCount(shape);
  if (bytes.byteLength !== count * info.bytes) {
    throw new RangeError(`tensor ${name}: ${bytes.byteLength} bytes for ${datatype} [${shape.join(',')}] (expected ${count * info.bytes})`);
  }
  const buffer = new ArrayBuffer(bytes.byteLength);
  const target = new Uint8Array(buffer);
  target.set(bytes);
  if (!HOST_IS_LE) swapInPlace(target, info.bytes);
  return { name, datatype, shape: [...shape], data: info.make(buffer, count) };
}

/** An empty typed array of the datatype, `length` elements long. */
export function allocateTensorData(datatype: TensorDataType, length: number): TensorData {
  return TYPES[datatype].make(new ArrayBuffer(length * TYPES[datatype].bytes), length);
}
