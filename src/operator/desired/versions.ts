/**
 * Which model versions Triton keeps loaded: the operator's side of a rollout. Triton decides
 * which versions of a model it loads by the model's version_policy, read from config.pbtxt
 * when a pod starts. A canary of another version, and the unloading of the old one after a
 * promotion, need that policy to follow the spec; so in explicit mode, for every model the
 * spec pins to versions, the operator loads the model on each Triton pod with the repository's
 * configuration and `version_policy: { specific: { versions } }` (Triton's model-repository
 * load API; ../triton-repository.ts).
 *
 * Pure functions of the RecognitionService: what to keep loaded, what one pod must load
 * next, and the readiness gate that keeps a new pod out of the Service until its versions are.
 */
import { SETTINGS } from '../../settings.js';
import type { RecognitionService } from '../api/types.js';
import type { ObservedDeployment } from '../status.js';
import { canaryModel, stableModel, type ModelRef } from './rollout.js';

/**
 * The pod condition the operator sets once a Triton pod has loaded the stable version: a
 * readiness gate on the pod template, so a pod that started with config.pbtxt's versions
 * (another one, or none of the pinned) gets no requests before the operator has loaded them.
 */
export const VERSIONS_LOADED_CONDITION = 'cv.recognition.io/versions-loaded';

/**
 * The versions to keep loaded, by model: in explicit mode, each model of the rollout (the
 * stable one, the canary's) whose every side names a version. A model with a side left to
 * "the newest loaded" ('') is left to its config.pbtxt: no policy can say "3 and the newest".
 * Other models of triton.models are never touched.
 */
export function servedVersions(rs: RecognitionService): Map<string, string[]> {
  const served = new Map<string, string[]>();
  if (rs.spec.triton.modelControlMode !== 'explicit') return served;
  const sides = [stableModel(rs), ...(rs.spec.canary ? [canaryModel(rs)!] : [])];
  for (const name of new Set(sides.map((s) => s.name))) {
    const versions = sides.filter((s) => s.name === name).map((s) => s.version);
    if (versions.every((v) => v !== '')) served.set(name, [...new Set(versions)].sort(byVersion));
  }
  return served;
}

/**
 * Whether Triton pods carry the readiness gate: explicit mode with the stable version pinned.
 * The spec's stable version alone decides, never the canary, so that no canary (pinned or
 * not) changes Triton's pod template.
 */
export function gatesReadiness(rs: RecognitionService): boolean {
  return rs.spec.triton.modelControlMode === 'explicit' && stableModel(rs).version !== '';
}

/** Whether the operator talks to Triton's pods: to load versions, or to read them for the gate. */
export function managesTriton(rs: RecognitionService): boolean {
  return gatesReadiness(rs) || servedVersions(rs).size > 0;
}

/**
 * The versions of one model a pod is to load, given those it has ready. While the API pods
 * are not all on the spec's settings (`apiSettled` false: a rollout of the API Deployment,
 * or old pods still draining), versions are only added: an old pod may still ask for the
 * version the spec just dropped. Once they are, exactly the served ones.
 * undefined: nothing to do.
 */
export function versionsToLoad(ready: readonly string[], served: readonly string[], apiSettled: boolean): string[] | undefined {
  const want = [...new Set(apiSettled ? served : [...served, ...ready])].sort(byVersion);
  const have = new Set(ready);
  return want.length === have.size && want.every((v) => have.has(v)) ? undefined : want;
}

function byVersion(a: string, b: string): number {
  return Number(a) - Number(b) || a.localeCompare(b);
}

/**
 * The versions of the served models that the API pods of this spec ask for: the stable one,
 * and the canary's while it takes requests (a weight above 0). A Triton pod lacking one is
 * not ready for the API pods to be given this spec (the reconciler holds them back).
 */
export function askedVersions(rs: RecognitionService): Map<string, string[]> {
  const served = servedVersions(rs);
  const canary = rs.spec.canary ? canaryModel(rs) : undefined;
  const sides = [stableModel(rs), ...(canary && canary.weight > 0 ? [canary] : [])];
  const asked = new Map<string, string[]>();
  for (const side of sides) if (served.has(side.name)) asked.set(side.name, [...(asked.get(side.name) ?? []), side.version]);
  return asked;
}

/** The stable model the running API pods ask for: their Deployment's TRITON_MODEL_NAME and TRITON_MODEL_VERSION ('' : the newest). */
export function liveStable(dep: ObservedDeployment | undefined): ModelRef | undefined {
  const env = dep?.spec?.template?.spec?.containers?.find((c) => c.name === 'api')?.env;
  const name = env?.find((e) => e.name === SETTINGS.tritonModelName.env)?.value;
  return name ? { name, version: env?.find((e) => e.name === SETTINGS.tritonModelVersion.env)?.value ?? '' } : undefined;
}
