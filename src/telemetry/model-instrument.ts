/**
 * Outcomes and inference latency per model and version, counted at each model's detector:
 * with a canary, the two sides are compared on these (docs/observability.md). A decorator
 * like those of ./instrument.ts: the detector it wraps keeps its interface.
 */
import { InferenceError, type DetectOptions, type ModelRef, type ObjectDetector } from '../recognition/detection.js';
import { ImageError } from '../recognition/image-ports.js';
import type { Metrics, ModelAttempt, ModelRecognitionOutcome } from './metrics.js';

/** A failure's outcome for the model, or undefined when it is not the model's (an image it could not decode). */
function failureOutcome(err: unknown, options: DetectOptions | undefined): ModelRecognitionOutcome | undefined {
  if (options?.signal?.aborted || (err instanceof InferenceError && (err.code === 'DEADLINE_EXCEEDED' || err.code === 'CANCELLED'))) return 'timeout';
  // Image errors (undecodable, too large) are raised before the model sees the image.
  return err instanceof ImageError ? undefined : 'ERROR';
}

/**
 * `ref` names the model a failure is counted against (the model may not be loaded yet).
 * `attempt`: 'fallback' for the stable model answering a request the canary failed, counted
 * apart so that each side's first attempts compare like with like.
 */
export function instrumentModel(
  detector: ObjectDetector,
  metrics: Metrics,
  ref: () => ModelRef = () => detector.model,
  attempt: ModelAttempt = 'first',
): ObjectDetector {
  return {
    get model() {
      return detector.model;
    },
    labels: () => detector.labels(),
    async detect(image, options) {
      try {
        const out = await detector.detect(image, options);
        metrics.countModelRecognition(out.model.name, out.model.version, 'DONE', attempt);
        metrics.observeModelInference(out.model.name, out.model.version, out.timings.inferMs / 1000);
        return out;
      } catch (err) {
        const outcome = failureOutcome(err, options);
        if (outcome !== undefined) {
          const m = ref();
          metrics.countModelRecognition(m.name, m.version, outcome, attempt);
        }
        throw err;
      }
    },
  };
}
