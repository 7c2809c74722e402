/** Shapes shared by the recognition use case's modules (charging, pipeline, batch fan-out). */
import type { IntakeImage } from './image-ports.js';
import type { ModelRef } from './detection.js';

/** What limits a key: its rate (src/limits) and its monthly quota (charged by the request repository). */
export interface KeyLimits {
  keyId: string;
  orgId: string;
  /** Per-key override; null = the configured default. */
  rateLimitPerMinute: number | null;
  monthlyQuota: number;
}

/** The authenticated caller: one API key of one organisation. */
export interface Caller {
  keyId: string;
  orgId: string;
  /** Catalog labels, or ["*"]. Never empty here (the API refuses keys without classes). */
  classes: string[];
  limits: KeyLimits;
}

export interface Logger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Optional observer of outcomes (metrics); the use case does not know who listens. */
export interface RecognitionObserver {
  recognition(outcome: 'DONE' | 'ERROR' | 'timeout' | 'replay', mode: 'sync' | 'batch'): void;
  batchSize(images: number): void;
  /** A rating given to a finished request, with the model that answered it (null: none did). */
  feedback?(model: ModelRef | null, rating: -1 | 0 | 1): void;
}

/** Per-request controls on the detections returned (and stored); each absent means no limit. */
export interface DetectionControls {
  minConfidence?: number;
  maxResults?: number;
  /** Narrows the key's classes; checked against them (and the catalog) before anything is charged. */
  classes?: string[];
}

export type SyncImage = { url: string } | { base64: string };

/** An image accepted at intake: a URL still to fetch, or decoded base64 bytes. */
export type Source = { kind: 'url'; url: string } | { kind: 'base64'; image: IntakeImage };
