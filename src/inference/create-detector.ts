/** Builds the detector the service and the CLI use: catalog + started backend + Detector. */
import type { Config } from '../config.js';
import type { Catalog } from '../models/catalog.js';
import { isRemoteCatalog, readCatalog } from '../models/catalog-source.js';
import type { ObjectDetector } from '../recognition/detection.js';
import type { InferenceBackend } from './backend.js';
import { createInferenceBackend } from './create-backend.js';
import { Detector } from './detector.js';
import { BackgroundStart, type RetryDelays } from './start-in-background.js';

/**
 * The caller owns the backend: close it on shutdown. `decorate` wraps the backend before
 * the detector uses it (the composition root adds metrics and tracing there).
 */
export async function createDetector(
  config: Config,
  decorate: (backend: InferenceBackend) => InferenceBackend = (b) => b,
): Promise<{ detector: ObjectDetector; backend: InferenceBackend }> {
  const catalog = await readCatalog(config);
  const backend = decorate(createInferenceBackend(config));
  try {
    // A backend that failed to start still holds resources (a gRPC channel that keeps reconnecting).
    await backend.start();
    const detector = new Detector(backend, catalog, { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    return { detector, backend };
  } catch (err) {
    await backend.close().catch(() => {});
    throw err;
  }
}

/**
 * For the server: the backend starts in the background (see BackgroundStart), so the API
 * listens at once and readiness waits for the model. A catalog file is still read first: a
 * missing file is a configuration error that should stop the start. An s3:// catalog is read
 * in the background too, retried until it is there (it may be uploaded after the API started).
 */
export async function createDetectorInBackground(
  config: Config,
  decorate: (backend: InferenceBackend) => InferenceBackend = (b) => b,
  onError: (err: unknown) => void = () => {},
  delays?: RetryDelays,
): Promise<{ detector: ObjectDetector; backend: BackgroundStart }> {
  const remote = isRemoteCatalog(config.modelCatalog);
  const file = remote ? undefined : await readCatalog(config);
  const options = { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels };
  const build = (started: InferenceBackend, catalog: Catalog) => {
    // The catalog must belong to the served model: labels of another model would be silently wrong.
    const served = started.metadata().name;
    if (served !== catalog.model.name) {
      throw new Error(`the catalog ${config.modelCatalog} is for model "${catalog.model.name}" but the backend serves "${served}"; give the API the catalog of that model (MODEL_CATALOG)`);
    }
    return new Detector(started, catalog, options);
  };
  const catalogs = { load: () => (file ? Promise.resolve(file) : readCatalog(config)), refreshable: remote };
  const backend = new BackgroundStart(decorate(createInferenceBackend(config)), build, catalogs, onError, delays);
  await backend.start();
  const expected = file?.model ?? { name: config.tritonUrl === undefined ? config.modelName : config.tritonModelName, version: '' };
  return { detector: backend.asDetector(expected), backend };
}
