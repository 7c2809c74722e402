/**
 * Which side of a canary answers a request: a domain rule shared with the operator and its
 * documentation (docs/triton.md). The request's bucket, 0..99, is the first 32 bits of the
 * SHA-256 of `<canary model>:<canary version>:<external_id>`, read as an unsigned integer,
 * modulo 100; buckets below the weight go to the canary.
 *
 * Within one rollout (one canary model and version) the same external_id always lands in the
 * same bucket, so it stays on one side for a given weight, and raising the weight only moves
 * buckets from stable to canary. The canary's name and version salt the hash so that each
 * rollout tries its canary on a different set of ids: a client cannot learn once which ids
 * stay on stable for every rollout, and no id is everyone's guinea pig.
 */
import { createHash } from 'node:crypto';

export type CanarySide = 'stable' | 'canary';

/** The canary model a rollout tries; `version` '' is Triton's latest. */
export interface CanaryRollout {
  name: string;
  version: string;
}

/** The request's bucket in this rollout, 0..99. */
export function canaryBucket(externalId: string, rollout: CanaryRollout): number {
  return createHash('sha256').update(`${rollout.name}:${rollout.version}:${externalId}`, 'utf8').digest().readUInt32BE(0) % 100;
}

/** `weight`: percent of requests for the canary, 0..100. */
export function canarySide(externalId: string, rollout: CanaryRollout, weight: number): CanarySide {
  return canaryBucket(externalId, rollout) < weight ? 'canary' : 'stable';
}
