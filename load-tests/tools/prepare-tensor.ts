/**
 * Writes the model input tensor of one image as raw little-endian FP32 bytes (NHWC,
 * RGB 0–255), for the gRPC scenario to send as raw_input_contents. It uses the API's own
 * preprocessing, so the inference layer alone receives exactly what the API would send.
 *
 *   tsx load-tests/tools/prepare-tensor.ts <image> <out.f32> [--size 512] [--fit stretch|letterbox]
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
  if (!image || !out) throw new Error('usage: prepare-tensor.ts <image> <out.f32> [--size 512] [--fit stretch|letterbox]');
  const size = Number(flag(args, '--size', '512'));
  const fit = flag(args, '--fit', 'stretch') as ResizeFit;
  if (!Number.isInteger(size) || size < 1) throw new Error(`--size must be a positive integer (got ${size})`);
  if (fit !== 'letterbox' && fit !== 'stretch') throw new Error(`--fit must be letterbox or stretch (got ${fit})`);

  const { tensor } = await prepareImage(readFileSync(image), { width: size, height: size }, { fit, maxPixels: 40_000_000 });
  // Explicit little-endian, whatever the host: the KServe v2 raw encoding is little-endian.
  const bytes = Buffer.alloc(tensor.length * 4);
  for (let i = 0; i < tensor.length; i++) bytes.writeFloatLE(tensor[i]!, i * 4);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, bytes);
  process.stderr.write(`prepare-tensor: ${path.basename(image)} -> ${out} ([1,${size},${size},3] FP32, ${bytes.length} bytes, ${fit})\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`prepare-tensor: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
