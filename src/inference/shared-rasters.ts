/**
 * Float32 buffers on shared memory, kept for reuse. A model input is 3 MB (512×512×3
 * floats); made afresh per image and copied to the inference thread, those buffers were
 * the main source of garbage and of full collections. Shared memory crosses to the
 * inference thread without a copy, and a returned buffer serves the next image.
 */
export class SharedRasterPool {
  private readonly free = new Map<number, Float32Array[]>();

  /** Keeps at most `keep` idle buffers of each length. */
  constructor(private readonly keep = 8) {}

  /** A buffer of `length` floats with arbitrary contents (a reused one is not cleared). */
  take(length: number): Float32Array {
    return this.free.get(length)?.pop() ?? new Float32Array(new SharedArrayBuffer(length * Float32Array.BYTES_PER_ELEMENT));
  }

  /** Gives a buffer back once nothing reads or writes it any more. */
  give(buffer: Float32Array): void {
    if (!isShared(buffer)) return;
    const list = this.free.get(buffer.length) ?? [];
    this.free.set(buffer.length, list);
    if (list.length < this.keep) list.push(buffer);
  }
}

export function isShared(data: ArrayBufferView): boolean {
  return data.buffer instanceof SharedArrayBuffer;
}
