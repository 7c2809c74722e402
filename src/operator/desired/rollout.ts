/**
 * The model rollout a RecognitionService asks for: the stable model (triton.modelName and
 * modelVersion) and, while spec.canary is set, a canary taking `weight` percent of requests.
 * The API does the routing (by a hash of each request's external_id); the operator only
 * passes it the two models (its environment: the rollout's entries of COMPUTED in ./api.ts). Triton already loads the canary's model: a
 * version because the operator loads the versions the spec pins (./versions.ts), another
 * model because the CRD requires it in triton.models (explicit mode), so a rollout never
 * restarts Triton.
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

/**
 * The canary, or undefined without spec.canary. A weight of 0 is still a canary: loaded,
 * answering nothing. `weight` is what the API pods get: the spec's, or under automatic
 * analysis the one the operator reached for this canary (status.rollout).
 */
export function canaryModel(rs: RecognitionService): Canary | undefined {
  const ref = canaryRef(rs);
  if (!ref) return undefined;
  const weight = isAnalysedRollout(rs) ? rs.status!.rollout!.canaryWeight : rs.spec.canary!.weight;
  return { ...ref, weight, otherModel: ref.name !== rs.spec.triton.modelName };
}

/** The spec's canary model and version, unset fields defaulted ('' : the newest loaded). */
function canaryRef(rs: RecognitionService): ModelRef | undefined {
  const c = rs.spec.canary;
  return c ? { name: c.modelName ?? stableModel(rs).name, version: c.modelVersion ?? '' } : undefined;
}

/**
 * Whether status.rollout holds the operator's analysis of the spec's canary next to the spec's
 * stable model: then its weight, not the spec's, is the one in force. Any other status (none,
 * an earlier canary, another stable model, analysis switched off) is not this rollout's.
 */
export function isAnalysedRollout(rs: RecognitionService): boolean {
  const canary = canaryRef(rs);
  const r = rs.status?.rollout;
  if (!rs.spec.canary?.analysis || !canary || !r?.analysis || !r.canary) return false;
  const stable = stableModel(rs);
  return r.stable.name === stable.name && r.stable.version === stable.version && r.canary.name === canary.name && r.canary.version === canary.version;
}
