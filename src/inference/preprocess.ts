/**
 * Image bytes → the model's input tensor, plus the geometry needed to map boxes back
 * onto the original image.
 */
import { decodeToRgb, decodeToRgbBytes, readImageHeader, type DecodeLimits } from '../images/decode.js';
import type { ImageFormat } from '../images/types.js';

/**
 * How the image is fitted into the model input.
 * - stretch (the default): scale each axis to the input, as the model's own runtime
 *   (@vladmandic/human) does, so the model's scores mean what its authors measured.
 *   On the real fixtures it keeps an out-of-catalog animal (the squirrel, "bird" 0.28)
 *   under the 0.3 threshold.
 * - letterbox: keep the aspect ratio and pad the rest, the image centred (Ultralytics) or
 *   at the top left (the TF Object Detection API's keep_aspect_ratio_resizer). For
 *   CenterNet it places boxes of wide images more tightly and scores people higher, but
 *   also lifts that squirrel to "bird" 0.36.
 * docs/detection.md has the measured comparison.
 */
export type ResizeFit = 'letterbox' | 'stretch';
export type ResizeAlign = 'centre' | 'corner';

export interface InputSize {
  width: number;
  height: number;
}

/** Maps model-input pixels to original-image pixels: x_original = x_input / scaleX. */
export interface ResizeGeometry {
  /** Original image size (after EXIF orientation). */
  width: number;
  height: number;
  /** Model input size. */
  inputWidth: number;
  inputHeight: number;
  /** Size of the image inside the input; the rest is padding. */
  contentWidth: number;
  contentHeight: number;
  /** Where the content starts inside the input (0, 0 unless centred). */
  offsetX: number;
  offsetY: number;
  scaleX: number;
  scaleY: number;
}

export function planResize(original: InputSize, input: InputSize, fit: ResizeFit, align: ResizeAlign = 'corner'): ResizeGeometry {
  let contentWidth = input.width;
  let contentHeight = input.height;
  if (fit === 'letterbox') {
    const scale = Math.min(input.width / original.width, input.height / original.height);
    // At least one pixel, so a 1×5000 sliver still decodes.
    contentWidth = Math.min(input.width, Math.max(1, Math.round(original.width * scale)));
    contentHeight = Math.min(input.height, Math.max(1, Math.round(original.height * scale)));
  }
  return {
    width: original.width,
    height: original.height,
    inputWidth: input.width,
    inputHeight: input.height,
    contentWidth,
    contentHeight,
    // An odd padding leaves its extra pixel on the right or bottom, as Ultralytics does.
    offsetX: align === 'centre' ? Math.floor((input.width - contentWidth) / 2) : 0,
    offsetY: align === 'centre' ? Math.floor((input.height - contentHeight) / 2) : 0,
    scaleX: contentWidth / original.width,
    scaleY: contentHeight / original.height,
  };
}

export interface PreparedImage<R extends Float32Array | Uint8Array = Float32Array | Uint8Array> {
  format: ImageFormat;
  /** NHWC RGB 0–255, one image: inputHeight × inputWidth × 3; floats or bytes as asked. */
  tensor: R;
  geometry: ResizeGeometry;
}

type PrepareOptions = DecodeLimits & { fit: ResizeFit; align?: ResizeAlign };

/**
 * Decodes, checks the pixel limit first, resizes: one libvips pipeline off the main thread.
 * A float raster (FP32 models) by default, bytes with `datatype: 'UINT8'` (models that
 * cast inside the graph). The raster goes `into` a given buffer, if any (bytes may come
 * straight from libvips instead, see decodeToRgbBytes).
 */
export async function prepareImage(bytes: Uint8Array, input: InputSize, options: PrepareOptions & { datatype?: 'FP32'; into?: Float32Array }): Promise<PreparedImage<Float32Array>>;
export async function prepareImage(bytes: Uint8Array, input: InputSize, options: PrepareOptions & { datatype: 'UINT8'; into?: Uint8Array }): Promise<PreparedImage<Uint8Array>>;
export async function prepareImage(bytes: Uint8Array, input: InputSize, options: PrepareOptions & { datatype?: 'FP32' | 'UINT8'; into?: Float32Array | Uint8Array }): Promise<PreparedImage>;
export async function prepareImage(
  bytes: Uint8Array,
  input: InputSize,
  options: PrepareOptions & { datatype?: 'FP32' | 'UINT8'; into?: Float32Array | Uint8Array },
): Promise<PreparedImage> {
  const header = await readImageHeader(bytes, options);
  const geometry = planResize(header, input, options.fit, options.align);
  const { contentWidth, contentHeight, offsetX, offsetY } = geometry;
  const layout = { width: input.width, height: input.height, contentWidth, contentHeight, offsetX, offsetY };
  const { into } = options;
  if (into !== undefined && (into instanceof Float32Array) !== (options.datatype !== 'UINT8')) throw new TypeError(`a ${into.constructor.name} cannot hold a ${options.datatype ?? 'FP32'} raster`);
  const tensor = options.datatype === 'UINT8'
    ? await decodeToRgbBytes(bytes, header, layout, options, into as Uint8Array | undefined)
    : await decodeToRgb(bytes, header, layout, options, into as Float32Array | undefined);
  return { format: header.format, tensor, geometry };
}
