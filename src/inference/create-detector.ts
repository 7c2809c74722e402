/** Builds the detector the service and the CLI use: catalog + started backend + Detector. */
import path from 'node:path';
import type { Config } from '../config.js';
import type { Catalog } from '../models/catalog.js';
import { isRemoteCatalog, readCatalog } from '../models/catalog-source.js';
import type { ModelRef, ObjectDetector } from '../recognition/detection.js';
import { BackendPair, CanaryDetector } from './canary-detector.js';
import type { InferenceBackend } from './backend.js';
import { createInferenceBackend } from './create-backend.js';
import { Detector } from './detector.js';
import { BackgroundStart, type RetryDelays } from './start-in-background.js';
import { BackendGroup, EnsembleDetector, type EnsembleClass } from './ensemble-detector.js';

/** What each model of the accurate profile proposes down to: fusion needs the weak boxes too. */
export const PROPOSAL_FLOOR = 0.05;
/** Boxes of one label from two models overlapping more than this are one object (the usual WBF value). */
export const FUSION_IOU = 0.55;

/**
 * The caller owns the backend: close it on shutdown. `decorate` wraps the backend before
 * the detector uses it (the composition root adds metrics and tracing there). `floor`
 * answers every class down to that score, the catalog's thresholds and SCORE_THRESHOLD set
 * aside: `recog model eval` applies them itself, after drawing its precision/recall curve.
 */
export async function createDetector(
  config: Config,
  decorate: (backend: InferenceBackend) => InferenceBackend = (b) => b,
  { floor }: { floor?: number } = {},
): Promise<{ detector: ObjectDetector; backend: InferenceBackend }> {
  if (config.detectionProfile === 'accurate') return createEnsemble(config, decorate, floor);
  const catalog = await readCatalog(config);
  const backend = decorate(await createInferenceBackend(config));
  try {
    // A backend that failed to start still holds resources (a gRPC channel that keeps reconnecting).
    await backend.start();
    const answering = { ...catalog, model: answeringModel(config, backend, catalog) };
    const detector = new Detector(backend, floor === undefined ? answering : proposalCatalog(answering), { scoreThreshold: floor ?? config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
    return { detector, backend };
  } catch (err) {
    await backend.close().catch(() => {});
    throw err;
  }
}

/**
 * The accurate profile, started before it answers (as createDetector): each model of the
 * ensemble on its own backend, proposing at the floor; see EnsembleDetector.
 */
async function createEnsemble(config: Config, decorate: (backend: InferenceBackend) => InferenceBackend, floor: number | undefined): Promise<{ detector: ObjectDetector; backend: InferenceBackend }> {
  const backends: InferenceBackend[] = [];
  const members: Detector[] = [];
  let classes: Map<string, EnsembleClass> | undefined;
  try {
    for (const [i, member] of ensembleConfigs(config).entries()) {
      const catalog = await readCatalog(member);
      const backend = decorate(await createInferenceBackend(member));
      backends.push(backend);
      await backend.start();
      if (i === 0) classes = ensembleClasses(floor === undefined ? catalog : proposalCatalog(catalog), floor ?? config.scoreThreshold);
      members.push(new Detector(backend, proposalCatalog({ ...catalog, model: answeringModel(member, backend, catalog) }), proposalOptions(config)));
    }
  } catch (err) {
    await Promise.all(backends.map((b) => b.close().catch(() => {})));
    throw err;
  }
  return { detector: ensembleOf(members, () => classes), backend: new BackendGroup(backends) };
}

/**
 * The settings of each model of the accurate profile: MODEL_NAME's own, then each of
 * ENSEMBLE_MODELS with its repository catalog (with Triton, its newest version). Embedded,
 * each session keeps INFERENCE_THREADS: sharing them out spent about 8% less CPU per request
 * under load but served about 7% fewer requests on two cores (docs/model.md).
 */
export function ensembleConfigs(config: Config): Config[] {
  return [
    config,
    ...config.ensembleModels.map((name) => ({
      ...config,
      modelName: name,
      tritonModelName: name,
      tritonModelVersion: '',
      modelCatalog: path.join(config.modelRepository, name, 'catalog.json'),
    })),
  ];
}

/** Every model counted alike (weighting SSDLite less, or adding mirrored views, measured no better: docs/model.md). */
function ensembleOf(members: readonly ObjectDetector[], classes: () => ReadonlyMap<string, EnsembleClass> | undefined): EnsembleDetector {
  return new EnsembleDetector(members.map((detector) => ({ detector, weight: 1 })), { classes, fusionIou: FUSION_IOU });
}

/** The first model's classes as the ensemble answers them: product ids and serving thresholds. */
function ensembleClasses(catalog: Catalog, scoreThreshold: number): Map<string, EnsembleClass> {
  return new Map(catalog.classes.map((c) => [c.label, { externalId: c.external_id, threshold: c.threshold ?? scoreThreshold }]));
}

/** The catalog without class thresholds: a model of the ensemble proposes every box down to the floor (the thresholds apply to the fused confidence). */
function proposalCatalog(catalog: Catalog): Catalog {
  return { ...catalog, classes: catalog.classes.map(({ threshold: _threshold, ...c }) => c) };
}

function proposalOptions(config: Config) {
  return { scoreThreshold: PROPOSAL_FLOOR, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels };
}

/**
 * The model each result names. Versions of one model may share a catalog (the stable
 * version's), so with Triton it is the model and version Triton reports serving; the
 * embedded ONNX Runtime serves the catalog's.
 */
function answeringModel(config: Config, started: InferenceBackend, catalog: Catalog): ModelRef {
  if (config.tritonUrl === undefined) return catalog.model;
  const served = started.metadata();
  return { name: served.name, version: served.version };
}

/**
 * Wraps one model's detector (the composition root counts outcomes per model there); `ref`
 * names that model; `attempt` 'fallback' is the stable model answering for a failed canary.
 */
export type DecorateDetector = (detector: ObjectDetector, ref: () => ModelRef, attempt?: 'first' | 'fallback') => ObjectDetector;

/**
 * For the server: the backend starts in the background (see BackgroundStart), so the API
 * listens at once and readiness waits for the model. A catalog file is still read first: a
 * missing file is a configuration error that should stop the start. An s3:// catalog is read
 * in the background too, retried until it is there (it may be uploaded after the API started).
 *
 * With Triton, each result names the model and version Triton reports serving, canary or
 * not: after a promotion, or with an empty TRITON_MODEL_VERSION (the latest), the catalog's
 * version may not be the one answering. The embedded ONNX Runtime names the catalog's.
 *
 * With a canary (CANARY_WEIGHT above 0, Triton only) a second backend serves the canary model
 * the same way, with its own catalog, and the detector routes each request to one of them
 * (see CanaryDetector); the returned backend is both, ready when the stable side is (the
 * canary's state is only reported: BackendPair).
 */
export async function createDetectorInBackground(
  config: Config,
  decorate: (backend: InferenceBackend) => InferenceBackend = (b) => b,
  onError: (err: unknown) => void = () => {},
  delays?: RetryDelays,
  decorateDetector: DecorateDetector = (d) => d,
): Promise<{ detector: ObjectDetector; backend: InferenceBackend }> {
  if (config.detectionProfile === 'accurate') {
    let classes: Map<string, EnsembleClass> | undefined;
    const sides: Side[] = [];
    try {
      for (const [i, member] of ensembleConfigs(config).entries()) {
        const onCatalog = i === 0 ? (catalog: Catalog) => (classes = ensembleClasses(catalog, config.scoreThreshold)) : () => {};
        sides.push(await startSide(member, i === 0 ? 'MODEL_CATALOG' : 'ENSEMBLE_MODELS', decorate, onError, delays, onCatalog));
      }
    } catch (err) {
      await Promise.all(sides.map((s) => s.backend.close().catch(() => {})));
      throw err;
    }
    const ensemble = ensembleOf(sides.map((s) => s.detector), () => classes);
    return { detector: decorateDetector(ensemble, () => ensemble.model), backend: new BackendGroup(sides.map((s) => s.backend)) };
  }
  const canary = config.canaryWeight > 0 && config.tritonUrl !== undefined;
  const stable = await startSide(config, 'MODEL_CATALOG', decorate, onError, delays);
  if (!canary) return { detector: decorateDetector(stable.detector, stable.ref), backend: stable.backend };
  const canaryConfig: Config = {
    ...config,
    tritonModelName: config.canaryModelName,
    tritonModelVersion: config.canaryModelVersion,
    modelCatalog: config.canaryModelCatalog,
  };
  const canaryName = `${config.canaryModelName}${config.canaryModelVersion ? ` version ${config.canaryModelVersion}` : ''}`;
  let second: Side;
  try {
    second = await startSide(canaryConfig, 'CANARY_MODEL_CATALOG', decorate, (err) => onError(new Error(`canary ${canaryName}: ${(err as Error).message}`, { cause: err })), delays);
  } catch (err) {
    await stable.backend.close().catch(() => {});
    throw err;
  }
  const detector = new CanaryDetector(
    {
      stable: decorateDetector(stable.detector, stable.ref, 'first'),
      canary: decorateDetector(second.detector, second.ref, 'first'),
      fallback: decorateDetector(stable.detector, stable.ref, 'fallback'),
    },
    { rollout: { name: config.canaryModelName, version: config.canaryModelVersion }, weight: config.canaryWeight, reserveMs: config.canaryReserveMs },
  );
  return { detector, backend: new BackendPair(stable.backend, second.backend, canaryName) };
}

interface Side {
  detector: ObjectDetector;
  backend: BackgroundStart;
  /** The model this side serves: as served once started, as configured before. */
  ref: () => ModelRef;
}

async function startSide(
  config: Config,
  catalogSetting: string,
  decorate: (backend: InferenceBackend) => InferenceBackend,
  onError: (err: unknown) => void,
  delays: RetryDelays | undefined,
  /** Given: a model of the accurate profile, which proposes at the floor and hands its catalog here. */
  onProposalCatalog?: (catalog: Catalog) => void,
): Promise<Side> {
  const remote = isRemoteCatalog(config.modelCatalog);
  const file = remote ? undefined : await readCatalog(config);
  const options = { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels };
  const build = (started: InferenceBackend, catalog: Catalog) => {
    // The catalog must belong to the served model: labels of another model would be silently wrong.
    const served = started.metadata();
    if (served.name !== catalog.model.name) {
      throw new Error(`the catalog ${config.modelCatalog} is for model "${catalog.model.name}" but the backend serves "${served.name}"; give the API the catalog of that model (${catalogSetting})`);
    }
    const answering = { ...catalog, model: answeringModel(config, started, catalog) };
    if (onProposalCatalog === undefined) return new Detector(started, answering, options);
    onProposalCatalog(catalog);
    return new Detector(started, proposalCatalog(answering), proposalOptions(config));
  };
  const catalogs = { load: () => (file ? Promise.resolve(file) : readCatalog(config)), refreshable: remote };
  const backend = new BackgroundStart(decorate(await createInferenceBackend(config)), build, catalogs, onError, delays);
  await backend.start();
  const configured = { name: config.tritonUrl === undefined ? config.modelName : config.tritonModelName, version: config.tritonModelVersion };
  const expected = config.tritonUrl !== undefined ? configured : (file?.model ?? { ...configured, version: '' });
  const detector = backend.asDetector(expected);
  return { detector, backend, ref: () => (backend.started ? detector.model : expected) };
}
