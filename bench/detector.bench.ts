/**
 * Detector throughput on this machine: bare model inferences/s (batch 1, a tensor made
 * once) against full pipeline images/s (JPEG decode + resize + infer + postprocess), and
 * their ratio; the target is pipeline ≥ 0.8 × bare model.
 *
 * The two are measured in alternating rounds, so load from elsewhere on the machine
 * falls on both alike. Both keep IN_FLIGHT calls in flight, as a server with several
 * clients does: the session's queue never runs dry, and in the pipeline one image
 * decodes while another is inferred. (With one call at a time the bare figure would
 * include the hand-over gap between runs, which on a loaded machine is large.)
 */
import os from 'node:os';
import sharp from 'sharp';
import { loadConfig } from '../src/config.js';
import { createInferenceBackend } from '../src/inference/create-backend.js';
import { Detector } from '../src/inference/detector.js';
import { toModelInput } from '../src/inference/families.js';
import { prepareImage } from '../src/inference/preprocess.js';
import { loadCatalog } from '../src/models/catalog.js';
import { readFixture } from '../test/helpers/fixtures.js';

const ROUNDS = 2;
const ROUND_MS = 2500;
const IN_FLIGHT = 3;
const TARGET_RATIO = 0.8;

/**
 * Runs `inFlight` loops of `task` until `ms` have passed. Returns completions, wall
 * seconds, and CPU seconds of this process (all its threads: event loop, libuv pool,
 * ORT pool), which other load on the machine does not inflate.
 */
async function throughput(task: () => Promise<unknown>, ms: number, inFlight: number): Promise<{ count: number; seconds: number; cpuSeconds: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + ms;
  let count = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await task();
        count++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { count, seconds: (performance.now() - start) / 1000, cpuSeconds: (used.user + used.system) / 1e6 };
}

export async function run(): Promise<void> {
  const config = loadConfig();
  const catalog = await loadCatalog(config.modelCatalog);
  const backend = await createInferenceBackend(config);
  await backend.start();
  try {
    const detector = new Detector(backend, catalog, { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    // The fixture converted to JPEG in memory: the most common upload format.
    const jpeg = await sharp(readFixture('basketball1.png')).jpeg({ quality: 90 }).toBuffer();
    const meta = await sharp(jpeg).metadata();
    const { input } = detector.spec;
    const prepared = await prepareImage(jpeg, input, { maxPixels: config.imageMaxPixels, fit: input.fit, datatype: detector.inputType });
    const tensor = toModelInput(prepared.tensor, prepared.geometry, detector.spec);

    const infer = () => backend.infer([tensor]);
    let stages = { decodeMs: 0, inferMs: 0, postprocessMs: 0, n: 0 };
    const detect = async () => {
      const { timings } = await detector.detect(jpeg);
      stages = { decodeMs: stages.decodeMs + timings.decodeMs, inferMs: stages.inferMs + timings.inferMs, postprocessMs: stages.postprocessMs + timings.postprocessMs, n: stages.n + 1 };
    };
    await infer(); // settle caches before measuring
    await detect();
    stages = { decodeMs: 0, inferMs: 0, postprocessMs: 0, n: 0 };

    const bare = { count: 0, seconds: 0, cpuSeconds: 0 };
    const pipe = { count: 0, seconds: 0, cpuSeconds: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      const b = await throughput(infer, ROUND_MS, IN_FLIGHT);
      const p = await throughput(detect, ROUND_MS, IN_FLIGHT);
      bare.count += b.count;
      bare.seconds += b.seconds;
      bare.cpuSeconds += b.cpuSeconds;
      pipe.count += p.count;
      pipe.seconds += p.seconds;
      pipe.cpuSeconds += p.cpuSeconds;
    }
    const bareRate = bare.count / bare.seconds;
    const pipeRate = pipe.count / pipe.seconds;
    const ratio = pipeRate / bareRate;
    const avg = (v: number) => (v / Math.max(1, stages.n)).toFixed(1);
    const bareCpuMs = (bare.cpuSeconds / bare.count) * 1000;
    const pipeCpuMs = (pipe.cpuSeconds / pipe.count) * 1000;

    const lines = [
      `machine          ${os.availableParallelism()} cores, ORT intra-op threads ${config.inferenceThreads}, model ${backend.metadata().name} ${input.width}×${input.height}`,
      `image            basketball1.png as JPEG q90, ${meta.width}×${meta.height}, ${jpeg.length} bytes`,
      `bare model       ${bareRate.toFixed(2)} inferences/s  (batch 1, pre-made tensor, ${IN_FLIGHT} in flight, ${bare.count} runs in ${bare.seconds.toFixed(1)} s)`,
      `full pipeline    ${pipeRate.toFixed(2)} images/s      (decode+resize+infer+postprocess, ${IN_FLIGHT} in flight, ${pipe.count} images in ${pipe.seconds.toFixed(1)} s)`,
      `  per image      decode+resize ${avg(stages.decodeMs)} ms, queue+infer ${avg(stages.inferMs)} ms, postprocess ${avg(stages.postprocessMs)} ms`,
      `cpu per image    bare ${bareCpuMs.toFixed(0)} ms, pipeline ${pipeCpuMs.toFixed(0)} ms (all threads of this process; ${(bareCpuMs / pipeCpuMs).toFixed(3)} = the ratio if every core were busy all the time, a floor)`,
      `ratio            ${ratio.toFixed(3)}  (images/s ÷ inferences/s; target ≥ ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await backend.close();
  }
}
