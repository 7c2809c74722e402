/**
 * The detector and the backend under it (embedded ONNX Runtime, or Triton). Passed in, they
 * are the caller's; otherwise the plugin starts them and closes the backend with the app.
 */
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { withTimeout } from '../deadline.js';
import type { InferenceBackend } from '../inference/backend.js';
import { BackendPair } from '../inference/canary-detector.js';
import { createDetector, createDetectorInBackground, type DecorateDetector } from '../inference/create-detector.js';
import { isRemoteCatalog } from '../models/catalog-source.js';
import type { ObjectDetector } from '../recognition/detection.js';
import { instrumentBackend, instrumentDetector } from '../telemetry/instrument.js';
import type { Metrics } from '../telemetry/metrics.js';
import { instrumentModel } from '../telemetry/model-instrument.js';

export interface Inference {
  detector: ObjectDetector;
  backend: InferenceBackend;
}

export interface InferenceOptions {
  config: Readonly<Config>;
  metrics: Metrics;
  inference?: Inference;
  /** Default: the app's logger. */
  log?: { warn(obj: object, msg: string): void };
}

async function start(config: Readonly<Config>, metrics: Metrics, log: NonNullable<InferenceOptions['log']>): Promise<Inference> {
  const instrument = (b: InferenceBackend) => instrumentBackend(b, metrics);
  // With Triton the server listens at once and readiness waits for the model (it may take
  // minutes to load), and for an s3:// catalog (it may not be uploaded yet); the embedded
  // ONNX Runtime with a catalog file loads in seconds and is awaited.
  // Outcomes and latency per model and version, on each model's detector (both sides of a canary).
  const perModel: DecorateDetector = (d, ref, attempt) => instrumentModel(d, metrics, ref, attempt);
  const { detector, backend } =
    config.tritonUrl === undefined && !isRemoteCatalog(config.modelCatalog)
      ? await createDetector(config, instrument).then((r) => ({ ...r, detector: instrumentModel(r.detector, metrics) }))
      : await createDetectorInBackground(config, instrument, (err) => log.warn({ err: (err as Error).message }, 'inference backend not ready'), undefined, perModel);
  return { detector: instrumentDetector(detector), backend };
}

/** How long the readiness check waits for the backend (/readyz gives each check 2 s). */
const READY_ANSWER_MS = 1_500;

export const inference = fp<InferenceOptions>(
  async (app, opts) => {
    let given = opts.inference;
    if (given === undefined) {
      given = await start(opts.config, opts.metrics, opts.log ?? app.log);
      const { backend } = given;
      app.addHook('onClose', () => backend.close());
    }
    const { detector, backend } = given;
    app.decorate('detector', detector);
    app.decorate('backend', backend);
    // Unready until the model has been served once (a pod gets no traffic while Triton loads).
    // After that an outage of the backend is every replica's: failing readiness would take them
    // all out of rotation and turn contract answers (ERROR 503, Retry-After) into refused
    // connections, so it is named as degraded instead, as a Redis outage is.
    let servedOnce = false;
    app.readiness.inference = async () => {
      // Under /readyz's own bound, so a backend that does not answer at all (a dead pod's
      // address) is judged here, degraded once served, rather than failed by that bound.
      if (await withTimeout(backend.ready(), READY_ANSWER_MS, () => false)) {
        servedOnce = true;
        return { ok: true };
      }
      const why = backend.lastError;
      const detail = why ? `model not ready: ${why}` : 'model not ready';
      return servedOnce ? { ok: true, degraded: true, detail } : { ok: false, detail };
    };
    // A canary that cannot serve is degraded, never unready: its requests go to the stable model.
    if (backend instanceof BackendPair) {
      app.readiness.canary = async () => {
        const state = await withTimeout(backend.canaryState(), READY_ANSWER_MS, () => ({ ready: false, detail: 'canary not answering' }));
        return state.ready ? { ok: true } : { ok: true, degraded: true, detail: state.detail };
      };
    }
  },
  { name: 'inference', fastify: '5.x', dependencies: ['readiness'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    /** The detector as the backend serves it, before the capacity gate (see recognition.ts). */
    detector: ObjectDetector;
    backend: InferenceBackend;
  }
}
