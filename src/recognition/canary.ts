/**
 * Which side of a canary answers a request: a domain rule shared with the operator and its
 * documentation (docs/triton.md). The first 32 bits of SHA-256 of the external_id, read as an
 * unsigned integer, modulo 100, give the request a bucket 0..99; buckets below the weight go
 * to the canary. The same external_id always lands in the same bucket, so it stays on one
 * side for a given weight, and raising the weight only moves buckets from stable to canary.
 */
import { createHash } from 'node:crypto';

export type CanarySide = 'stable' | 'canary';

/** The request's bucket, 0..99. */
export function canaryBucket(externalId: string): number {
  return createHash('sha256').update(externalId, 'utf8').digest().readUInt32BE(0) % 100;
}

/** `weight`: percent of requests for the canary, 0..100. */
export function canarySide(externalId: string, weight: number): CanarySide {
  return canaryBucket(externalId) < weight ? 'canary' : 'stable';
}
