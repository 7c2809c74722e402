/**
 * The JSON the server sends and receives, named from the types generated out of its
 * /openapi.json (openapi.ts, `npm run generate`). Nothing here is written by hand, so a
 * change of the server's contract breaks the compile of whatever reads it.
 */
import type { components, operations } from './openapi.js';

type Schemas = components['schemas'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Success<R> = R extends { 200: infer A } ? A : R extends { 201: infer A } ? A : never;

/** The JSON body an operation answers with when it succeeds (200, or 201 for a creation). */
export type Ok<Op extends keyof operations> = JsonOf<Success<operations[Op]['responses']>>;
/** The JSON body an operation takes. */
export type Body<Op extends keyof operations> = JsonOf<NonNullable<operations[Op]['requestBody']>>;

export type WireBoundingBox = Schemas['BoundingBox'];
export type WireDetection = Schemas['Detection'];
export type WireCVResult = Schemas['CVResult'];
export type WireBatchImageResult = Schemas['BatchImageResult'];
export type WireBatchResult = Schemas['BatchCVResult'];
export type WireFeedbackResult = Schemas['FeedbackResult'];

export type Role = Schemas['ConsoleRole'];
export type User = Schemas['ConsoleUser'];
export type Membership = Schemas['ConsoleMembership'];
export type ApiKey = Schemas['ConsoleKey'];
export type KeyStatus = ApiKey['status'];
export type Usage = Schemas['ConsoleUsage'];
export type UsageDay = Usage['days'][number];
