/**
 * Writes the model input tensor of one image (NHWC, RGB 0–255) as raw bytes, for the gRPC
 * scenario to send as raw_input_contents: UINT8 (the models this repository prepares cast
 * to float in their graph) or little-endian FP32. It uses the API's own preprocessing, so
 * the inference layer alone receives exactly what the API would send.
 *
 *   tsx load-tests/tools/prepare-tensor.ts <image> <out> [--size 512] [--fit stretch|letterbox] [--datatype UINT8|FP32]
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { prepareImage, type ResizeFit } from '../../src/inference/preprocess.js';

function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1]! : fallback;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [image, out] = args;
  if (!image || !out) throw new Error('usage: prepare-tensor.ts <image> <out> [--size 512] [--fit stretch|letterbox] [--datatype UINT8|FP32]');
  const datatype = flag(args, '--datatype', 'UINT8');
  if (datatype !== 'UINT8' && datatype !== 'FP32') throw new Error(`--datatype must be UINT8 or FP32 (got ${datatype})`);
  const size = Number(flag(args, '--size', '512'));
  const fit = flag(args, '--fit', 'stretch') as ResizeFit;
  if (!Number.isInteger(size) || size < 1) throw new Error(`--size must be a positive integer (got ${size})`);
  if (fit !== 'letterbox' && fit !== 'stretch') throw new Error(`--fit must be letterbox or stretch (got ${fit})`);

  const { tensor } = await prepareImage(readFileSync(image), { width: size, height: size }, { fit, maxPixels: 40_000_000, datatype });
  // Explicit little-endian, whatever the host: the KServe v2 raw encoding is little-endian.
  const bytes = Buffer.alloc(tensor.byteLength);
  if (tensor instanceof Float32Array) for (let i = 0; i < tensor.length; i++) bytes.writeFloatLE(tensor[i]!, i * 4);
  else bytes.set(tensor);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  process.stderr.write(`prepare-tensor: ${path.basename(image)} -> ${out} ([1,${size},${size},3] ${datatype}, ${bytes.length} bytes, ${fit})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`prepare-tensor: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
