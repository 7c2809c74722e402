/**
 * `recog detect <file-or-url> [--json] [--threshold N]`: detects the objects of one image
 * with the embedded model and prints them. URLs go through the same SSRF-safe fetcher as
 * the API (IMAGE_FETCH_* settings apply).
 */
import { open } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig, type Config } from '../../config.js';
import { readImageHeader } from '../../images/decode.js';
import { ImageError } from '../../images/errors.js';
import { createImageFetcher } from '../../images/fetch.js';
import type { ImageFetcher } from '../../images/types.js';
import { InferenceError } from '../../inference/backend.js';
import { createDetector } from '../../inference/create-detector.js';
import type { Detection, DetectionOutcome } from '../../recognition/detection.js';

/** A local file larger than this is refused before reading (the API's limit is far lower). */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

export interface DetectReport {
  source: string;
  outcome: DetectionOutcome;
  threshold: number;
  /** Decode to postprocess, milliseconds. */
  processingMs: number;
}

/** Bytes of a local file, or of an http(s) URL through the SSRF-safe fetcher. */
export async function readImageSource(source: string, fetcher: ImageFetcher): Promise<Uint8Array> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    fetcher.validate(source);
    return (await fetcher.fetch(source)).bytes;
  }
  let file;
  try {
    file = await open(source, 'r');
  } catch (err) {
    throw new Error(`cannot open ${source}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  try {
    const { size, isFile } = await file.stat().then((s) => ({ size: s.size, isFile: s.isFile() }));
    if (!isFile) throw new Error(`${source} is not a file`);
    if (size > MAX_FILE_BYTES) throw new Error(`${source} is ${size} bytes; the limit is ${MAX_FILE_BYTES}`);
    return await file.readFile();
  } finally {
    await file.close();
  }
}

/** Runs one detection with a detector built from `config` and closes it again. */
export async function runDetect(source: string, config: Readonly<Config>, options: { threshold?: number; fetcher?: ImageFetcher } = {}): Promise<DetectReport> {
  const effective: Config = { ...config, scoreThreshold: options.threshold ?? config.scoreThreshold };
  const fetcher =
    options.fetcher ??
    createImageFetcher({
      allowCidrs: config.imageFetchAllowCidrs,
      timeoutMs: config.imageFetchTimeoutMs,
      maxBytes: config.imageFetchMaxBytes,
      maxRedirects: config.imageFetchMaxRedirects,
    });
  // Read and check the header first: a missing file, a refused URL or a non-image should
  // not wait for the model to load.
  const bytes = await readImageSource(source, fetcher);
  await readImageHeader(bytes, { maxPixels: config.imageMaxPixels });
  const { detector, backend } = await createDetector(effective);
  try {
    const started = performance.now();
    const outcome = await detector.detect(bytes);
    return { source, outcome, threshold: effective.scoreThreshold, processingMs: Math.round(performance.now() - started) };
  } finally {
    await backend.close();
  }
}

/** The JSON form: `results` as the API's detections, plus image size, model and time. */
export function formatJson(report: DetectReport): string {
  const { outcome } = report;
  return JSON.stringify(
    {
      results: outcome.detections.map((d: Detection) => ({ label: d.label, external_id: d.external_id, bounding_box: d.bounding_box, confidence: d.confidence })),
      image: { width: outcome.width, height: outcome.height },
      model: outcome.model,
      threshold: report.threshold,
      processing_time_ms: report.processingMs,
    },
    null,
    2,
  );
}

/** A table for people. */
export function formatTable(report: DetectReport): string {
  const { outcome } = report;
  const head = `${report.source}: ${outcome.width}×${outcome.height}, model ${outcome.model.name} v${outcome.model.version}, ${report.processingMs} ms`;
  if (outcome.detections.length === 0) return `${head}\nno detections at or above ${report.threshold}`;
  const rows = [
    ['LABEL', 'EXTERNAL_ID', 'CONFIDENCE', 'X', 'Y', 'WIDTH', 'HEIGHT'],
    ...outcome.detections.map((d) => {
      const b = d.bounding_box;
      return [d.label, d.external_id, d.confidence.toFixed(3), String(b.x), String(b.y), String(b.width), String(b.height)];
    }),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd());
  return [head, ...lines].join('\n');
}

function parseThreshold(raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number from 0 to 1.');
  return n;
}

export function register(program: Command): void {
  program
    .command('detect')
    .description('Detect objects in one image (a file, or an http/https URL) with the embedded model')
    .argument('<file-or-url>', 'JPEG, PNG, WebP or GIF file, or an http(s) URL')
    .option('--json', 'print JSON: {results: [{label, external_id, bounding_box, confidence}], image, model, ...}', false)
    .option('--threshold <score>', 'lowest confidence to report, 0–1 (default: SCORE_THRESHOLD or 0.3)', parseThreshold)
    .action(async (source: string, opts: { json: boolean; threshold?: number }) => {
      let report: DetectReport;
      try {
        report = await runDetect(source, loadConfig(), { threshold: opts.threshold });
      } catch (err) {
        // Keep the stable code in the message: scripts can match on it.
        if (err instanceof ImageError || err instanceof InferenceError) throw new Error(`${source}: ${err.message} (${err.code})`, { cause: err });
        throw err;
      }
      process.stdout.write(`${opts.json ? formatJson(report) : formatTable(report)}\n`);
    });
}
