/**
 * The model rollout a RecognitionService asks for: the stable model (triton.modelName and
 * modelVersion) and, while spec.canary is set, a canary taking `weight` percent of requests.
 * The API does the routing (by a hash of each request's external_id); the operator only
 * passes it the two models (its environment). Triton already loads the canary's model: a
 * version through its config.pbtxt's version_policy, another model because the CRD requires
 * it in triton.models (explicit mode), so a rollout never restarts Triton.
 */
import type { EnvVar, RecognitionService } from '../api/types.js';

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

/**
 * TRITON_MODEL_VERSION and CANARY_* (the API's side of the contract; the catalog's
 * CANARY_MODEL_CATALOG comes from ./catalog.ts). Only what differs from the API's defaults is
 * written, so a resource without a version or canary keeps the pod template it always had
 * (an operator upgrade rolls no pods).
 */
export const ROLLOUT_ENV = ['TRITON_MODEL_VERSION', 'CANARY_WEIGHT', 'CANARY_MODEL_NAME', 'CANARY_MODEL_VERSION', 'CANARY_MODEL_CATALOG'] as const;

export function rolloutEnv(rs: RecognitionService, canaryCatalog: string | undefined): EnvVar[] {
  const stable = stableModel(rs);
  const canary = canaryModel(rs);
  const env: EnvVar[] = [];
  if (stable.version !== '') env.push({ name: 'TRITON_MODEL_VERSION', value: stable.version });
  if (canary) {
    env.push({ name: 'CANARY_WEIGHT', value: String(canary.weight) }, { name: 'CANARY_MODEL_NAME', value: canary.name });
    if (canary.version !== '') env.push({ name: 'CANARY_MODEL_VERSION', value: canary.version });
    if (canary.otherModel && canaryCatalog !== undefined) env.push({ name: 'CANARY_MODEL_CATALOG', value: canaryCatalog });
  }
  return env;
}
