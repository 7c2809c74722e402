/**
 * The `accurate` detection profile: the answers of several models on each photo fused into
 * one by weighted box fusion (./box-fusion.ts). The models propose at a low floor; the fused
 * confidence is then held to the serving thresholds of the first model's catalog, which also
 * names the classes answered and their product ids. docs/model.md has what it gains and what
 * it costs.
 */
import type { InferOptions, InferenceBackend, ModelMetadata, Tensor } from './backend.js';
import { fuseBoxes } from './box-fusion.js';
import type { DetectionOutcome, DetectOptions, ModelRef, ObjectDetector } from '../recognition/detection.js';
import { InferenceError } from '../recognition/detection.js';

export interface EnsembleMember {
  detector: ObjectDetector;
  /** How much its boxes count in the fusion (1: as much as any other). */
  weight: number;
}

/** A class the ensemble answers: its product id and the lowest fused confidence served. */
export interface EnsembleClass {
  externalId: string;
  threshold: number;
}

export interface EnsembleOptions {
  /** The first model's classes by label, once its catalog is read (undefined before). */
  classes: () => ReadonlyMap<string, EnsembleClass> | undefined;
  /** Boxes of one label overlapping more than this are one object. */
  fusionIou: number;
}

/** The members' detectors must answer every box at or above the floor (no class thresholds): see createDetector. */
export class EnsembleDetector implements ObjectDetector {
  constructor(
    private readonly members: readonly EnsembleMember[],
    private readonly options: EnsembleOptions,
  ) {}

  /** The models fused, as one name and version: `centernet+ssdlite`, `1+1`. */
  get model(): ModelRef {
    const refs = this.members.map((m) => m.detector.model);
    return { name: refs.map((r) => r.name).join('+'), version: refs.map((r) => r.version).join('+') };
  }

  labels(): string[] {
    return this.members[0].detector.labels();
  }

  async detect(image: Uint8Array, options: DetectOptions = {}): Promise<DetectionOutcome> {
    // Each model decodes the photo for its own input, concurrently with the others.
    const outcomes = await Promise.all(this.members.map((m) => m.detector.detect(image, options)));
    const classes = this.options.classes();
    if (classes === undefined) throw new InferenceError('UNAVAILABLE', 'the model catalog is not read yet');
    const fused = fuseBoxes(
      outcomes.map((o, i) => ({ detections: o.detections, weight: this.members[i].weight })),
      this.options.fusionIou,
    );
    const detections = [];
    for (const d of fused) {
      const cls = classes.get(d.label);
      if (cls !== undefined && d.confidence >= cls.threshold) detections.push({ ...d, external_id: cls.externalId });
    }
    const sum = (stage: keyof DetectionOutcome['timings']) => outcomes.reduce((s, o) => s + o.timings[stage], 0);
    return {
      detections,
      width: outcomes[0].width,
      height: outcomes[0].height,
      model: this.model,
      // Summed over the models: the work done, not the wall time (the models overlap).
      timings: { decodeMs: sum('decodeMs'), inferMs: sum('inferMs'), postprocessMs: sum('postprocessMs') },
    };
  }
}

/** The ensemble's backends as one: ready when every model is, closed together. */
export class BackendGroup implements InferenceBackend {
  readonly kind: InferenceBackend['kind'];

  constructor(private readonly members: readonly InferenceBackend[]) {
    this.kind = members[0].kind;
  }

  async start(): Promise<void> {
    await Promise.all(this.members.map((m) => m.start()));
  }

  /** The first model's: the one whose catalog the ensemble answers with. */
  metadata(): ModelMetadata {
    return this.members[0].metadata();
  }

  async ready(): Promise<boolean> {
    const states = await Promise.all(this.members.map((m) => m.ready()));
    return states.every(Boolean);
  }

  get lastError(): string | undefined {
    return this.members.map((m) => m.lastError).find((e) => e !== undefined);
  }

  infer(inputs: Tensor[], options?: InferOptions): Promise<Map<string, Tensor>> {
    return this.members[0].infer(inputs, options);
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((m) => m.close()));
  }
}
