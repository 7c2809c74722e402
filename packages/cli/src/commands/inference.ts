/** recognize, batch, request and feedback: the public API with an API key. */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { ApiError, type Detection, type DetectionControls, type Rating, type RecognitionResult } from '@recognition-service/client';
import { annotate } from '../annotate.js';
import type { Context } from '../context.js';
import { classify, EXIT, printJson, table, UsageError } from '../output.js';

const RATINGS: Record<string, Rating> = { bad: -1, neutral: 0, good: 1, '-1': -1, '0': 0, '1': 1 };

const isUrl = (s: string) => /^https?:\/\//i.test(s);

function boxText(d: Detection): string {
  const b = d.boundingBox;
  return `${b.x},${b.y} ${b.width}x${b.height}`;
}

function detectionRows(prefix: string[], detections: Detection[], tail: string[] = []): string[][] {
  if (detections.length === 0) return [[...prefix, '-', '-', '-', ...tail]];
  return detections.map((d) => [...prefix, d.label, d.confidence !== undefined ? d.confidence.toFixed(2) : '-', boxText(d), ...tail]);
}

/**
 * Default idempotency id: the same bytes (or URL) and controls give the same id, so a re-run
 * replays. The controls are in it because a replay answers the stored result whatever the
 * controls: a re-run with other flags must be a new request, not the old answer.
 */
function derivedExternalId(kind: 'file' | 'url', content: Uint8Array | string, controls: DetectionControls): string {
  const hash = createHash('sha256').update(content);
  // Without controls the id stays what earlier versions derived, so their runs still replay.
  if (Object.keys(controls).length > 0) hash.update(JSON.stringify([controls.minConfidence, controls.maxResults, controls.classes]));
  return `${kind}-sha256-${hash.digest('hex').slice(0, 40)}`;
}

interface ControlFlags {
  minConfidence?: string;
  maxResults?: string;
  classes?: string;
}

/** Adds the detection-control flags to a command; the server checks their ranges. */
function withControls(cmd: Command): Command {
  return cmd
    .option('--min-confidence <n>', 'only detections with at least this confidence (0 to 1)')
    .option('--max-results <n>', 'at most this many detections (1 to 100), the most confident first')
    .option('--classes <list>', 'only these comma-separated labels, within the key\'s classes')
    .addHelpText('after', '\nA replay (an external id seen before) answers its stored result whatever these flags say.');
}

/** Parses the flags strictly: a typo must not silently become "no filter". */
function detectionControls(f: ControlFlags): DetectionControls {
  const controls: DetectionControls = {};
  if (f.minConfidence !== undefined) {
    if (!/^(\d+\.?\d*|\.\d+)$/.test(f.minConfidence)) throw new UsageError(`--min-confidence takes a number from 0 to 1, not "${f.minConfidence}"`);
    controls.minConfidence = Number(f.minConfidence);
  }
  if (f.maxResults !== undefined) {
    if (!/^\d+$/.test(f.maxResults)) throw new UsageError(`--max-results takes a whole number, not "${f.maxResults}"`);
    controls.maxResults = Number(f.maxResults);
  }
  if (f.classes !== undefined) controls.classes = f.classes.split(',').map((s) => s.trim());
  return controls;
}

interface RecognizeFlags extends ControlFlags {
  externalId?: string;
  annotate?: string;
}

interface Outcome {
  input: string;
  result?: RecognitionResult;
  error?: { status?: number; error_code?: string; message: string };
  exit: number;
}

export function registerInference(program: Command, ctx: () => Context, setExit: (code: number) => void): void {
  withControls(
    program
      .command('recognize')
      .description('recognize objects in images (files or http(s) URLs), one sync request per image')
      .argument('<inputs...>', 'image files or URLs')
      .option('--external-id <id>', 'idempotency id (default: derived from the image bytes and the controls below, so a re-run replays instead of charging again); with several inputs, -1, -2, ... is appended')
      .option('--annotate <path>', 'write the image with boxes and labels drawn (a file for one input, a directory for several)'),
  ).action(async (inputs: string[], opts: RecognizeFlags) => {
    const c = ctx();
    const controls = detectionControls(opts);
    if (opts.annotate && inputs.length > 1) {
      const s = await stat(opts.annotate).catch(() => undefined);
      if (!s?.isDirectory()) throw new UsageError('with several inputs, --annotate names an existing directory');
    }
    const client = await c.recognition((m) => process.stderr.write(`${m}\n`));
    const progress = inputs.length > 1 && process.stderr.isTTY;
    const outcomes: Outcome[] = [];
    for (const [i, input] of inputs.entries()) {
      if (progress) process.stderr.write(`\r[${i + 1}/${inputs.length}] ${input.slice(-60)}\x1b[K`);
      outcomes.push(await recognizeOne(client, input, i, inputs.length, opts, controls));
    }
    if (progress) process.stderr.write('\r\x1b[K');
    if (c.json) {
      printJson(outcomes.map(({ exit: _exit, ...o }) => o));
    } else {
      const rows = outcomes.flatMap((o) =>
        o.result
          ? detectionRows([o.input, o.result.requestId, o.result.status + (o.result.replayed ? ' (replayed)' : '')], o.result.detections, [o.result.error ?? ''])
          : [[o.input, '-', 'FAILED', '-', '-', '-', o.error?.message ?? '']],
      );
      process.stdout.write(`${table(rows, ['INPUT', 'REQUEST', 'STATUS', 'LABEL', 'CONF', 'BOX', 'ERROR'])}\n`);
    }
    for (const o of outcomes) if (o.error && !c.json) process.stderr.write(`${o.input}: ${o.error.message}\n`);
    setExit(outcomes.map((o) => o.exit).find((e) => e !== EXIT.ok) ?? EXIT.ok);
  });

  async function recognizeOne(client: Awaited<ReturnType<Context['recognition']>>, input: string, index: number, count: number, opts: RecognizeFlags, controls: DetectionControls): Promise<Outcome> {
    try {
      let bytes: Uint8Array | undefined;
      let externalId: string;
      if (isUrl(input)) {
        externalId = derivedExternalId('url', input, controls);
      } else {
        bytes = await readFile(input).catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read ${input}: ${err.code ?? err.message}`);
        });
        externalId = derivedExternalId('file', bytes, controls);
      }
      if (opts.externalId) externalId = count > 1 ? `${opts.externalId}-${index + 1}` : opts.externalId;
      const result = bytes ? await client.recognize({ externalId, image: bytes, ...controls }) : await client.recognize({ externalId, imageUrl: input, ...controls });
      if (opts.annotate && result.status === 'DONE') {
        const image = bytes ?? new Uint8Array(await (await fetch(input)).arrayBuffer());
        const out = count > 1 ? path.join(opts.annotate, `${path.basename(input).replace(/\.[^.]*$/, '') || `image-${index + 1}`}.annotated.png`) : opts.annotate;
        await annotate(image, result.detections, out);
      }
      return { input, result, exit: result.status === 'DONE' ? EXIT.ok : EXIT.partial };
    } catch (err) {
      const { code, message } = classify(err);
      if (err instanceof UsageError) throw err;
      return { input, error: { ...(err instanceof ApiError ? { status: err.status, error_code: err.errorCode } : {}), message }, exit: code };
    }
  }

  withControls(
    program
      .command('batch')
      .description('recognize up to 10 image URLs in one batch call; the controls apply to every image')
      .argument('<urls...>', 'http(s) image URLs')
      .option('--external-id <id>', 'a tracking id for the batch (not idempotent: a batch is never resent after the server started on it)'),
  ).action(async (urls: string[], opts: ControlFlags & { externalId?: string }) => {
    const c = ctx();
    const controls = detectionControls(opts);
    const bad = urls.find((u) => !isUrl(u));
    if (bad) throw new UsageError(`not an http(s) URL: ${bad} (use recognize for files)`);
    const result = await (await c.recognition((m) => process.stderr.write(`${m}\n`))).batch(urls, opts.externalId, controls);
    if (c.json) printJson(result);
    else {
      const rows = result.results.flatMap((e) => detectionRows([e.imageUrl, e.requestId ?? '-', e.status], e.detections, [e.error ?? '']));
      process.stdout.write(`${table(rows, ['URL', 'REQUEST', 'STATUS', 'LABEL', 'CONF', 'BOX', 'ERROR'])}\n`);
    }
    setExit(result.results.every((e) => e.success) ? EXIT.ok : EXIT.partial);
  });

  program
    .command('request')
    .description('show the status and result of an earlier request')
    .argument('<request-id>', 'the request id a recognize or batch printed')
    .action(async (id: string) => {
      const c = ctx();
      const result = await (await c.recognition()).getRequest(id).catch((err: unknown) => {
        if (err instanceof TypeError) throw new UsageError(err.message);
        throw err;
      });
      if (c.json) printJson(result);
      else {
        process.stdout.write(`request ${result.requestId}  external_id ${result.externalId}  ${result.status}${result.processingTimeMs !== undefined ? `  ${result.processingTimeMs} ms` : ''}\n`);
        if (result.error) process.stdout.write(`error: ${result.error}\n`);
        process.stdout.write(`${table(detectionRows([], result.detections), ['LABEL', 'CONF', 'BOX'])}\n`);
      }
    });

  program
    .command('feedback')
    .description('rate an earlier request: good, neutral or bad')
    .argument('<request-id>', 'the request to rate')
    .argument('<rating>', 'good | neutral | bad (or 1 | 0 | -1)')
    .action(async (id: string, ratingText: string) => {
      const c = ctx();
      const rating = RATINGS[ratingText.toLowerCase()];
      if (rating === undefined) throw new UsageError(`rating must be good, neutral or bad, not "${ratingText}"`);
      const result = await (await c.recognition()).feedback(id, rating);
      if (c.json) printJson(result);
      else process.stdout.write(`rated ${result.requestId}: ${ratingText}\n`);
    });
}
