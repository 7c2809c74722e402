/**
 * Model-input buffers on shared memory, kept for reuse: Float32 for FP32 models (3 MB for
 * 512×512×3) and bytes for UINT8 ones (0.75 MB). Made afresh per image and copied to the
 * inference thread, those buffers were the main source of garbage and of full collections.
 * Shared memory crosses to the inference thread without a copy, and a returned buffer
 * serves the next image.
 */
export type Raster = Float32Array | Uint8Array;

export class SharedRasterPool {
  private readonly floats = new Map<number, Float32Array[]>();
  private readonly bytes = new Map<number, Uint8Array[]>();

  /** Keeps at most `keep` idle buffers of each type and length. */
  constructor(private readonly keep = 8) {}

  /** A buffer of `length` floats with arbitrary contents (a reused one is not cleared). */
  take(length: number): Float32Array {
    return this.floats.get(length)?.pop() ?? new Float32Array(new SharedArrayBuffer(length * Float32Array.BYTES_PER_ELEMENT));
  }

  /** A buffer of `length` bytes with arbitrary contents (a reused one is not cleared). */
  takeBytes(length: number): Uint8Array {
    return this.bytes.get(length)?.pop() ?? new Uint8Array(new SharedArrayBuffer(length));
  }

  /** Gives a buffer back once nothing reads or writes it any more. */
  give(buffer: Raster): void {
    // Only whole shared buffers of the two kinds the pool hands out (a Buffer view is not one).
    if (!isShared(buffer) || buffer.byteOffset !== 0 || buffer.byteLength !== buffer.buffer.byteLength) return;
    if (buffer instanceof Float32Array) keep(this.floats, buffer, this.keep);
    else if (buffer.constructor === Uint8Array) keep(this.bytes, buffer, this.keep);
  }
}

function keep<T extends Raster>(free: Map<number, T[]>, buffer: T, max: number): void {
  const list = free.get(buffer.length) ?? [];
  free.set(buffer.length, list);
  if (list.length < max) list.push(buffer);
}

export function isShared(data: ArrayBufferView): boolean {
  return data.buffer instanceof SharedArrayBuffer;
}
