/**
 * The model rollout a RecognitionService asks for: the stable model (triton.modelName and
 * modelVersion) and, while spec.canary is set, a canary taking `weight` percent of requests.
 * The API does the routing (by a hash of each request's external_id); the operator only
 * passes it the two models (its environment: the rollout's entries of COMPUTED in ./api.ts). Triton already loads the canary's model: a
 * version through its config.pbtxt's version_policy, another model because the CRD requires
 * it in triton.models (explicit mode), so a rollout never restarts Triton.
 */
import type { RecognitionService } from '../api/types.js';

export interface ModelRef {
  name: string;
  /** '' : the newest version Triton has loaded. */
  version: string;
}

export interface Canary extends ModelRef {
  weight: number;
  /** The canary is another model, not another version of the stable one: its own catalog (and, listed in triton.models by the SRE, loaded by Triton). */
  otherModel: boolean;
}

export function stableModel(rs: RecognitionService): ModelRef {
  return { name: rs.spec.triton.modelName, version: rs.spec.triton.modelVersion ?? '' };
}

/** The canary, or undefined without spec.canary. A weight of 0 is still a canary: loaded, answering nothing. */
export function canaryModel(rs: RecognitionService): Canary | undefined {
  const c = rs.spec.canary;
  if (!c) return undefined;
  const stable = stableModel(rs);
  const name = c.modelName ?? stable.name;
  return { name, version: c.modelVersion ?? '', weight: c.weight, otherModel: name !== stable.name };
}
