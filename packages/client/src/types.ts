/** What the client hands back, whichever of the spec's two response shapes the server used. */

export type RequestStatus = 'QUEUED' | 'PROCESSING' | 'DONE' | 'ERROR';

export interface BoundingBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Detection {
  label: string;
  /** The recognised product's external id (CVResult `external_id`); absent in the guides' shape. */
  productId?: string;
  boundingBox: BoundingBox;
  confidence?: number;
  /** The guides' shape may name the model per detection. */
  modelName?: string;
}

export interface RecognitionResult {
  requestId: string;
  externalId: string;
  status: RequestStatus;
  success: boolean;
  imageUrl?: string;
  detections: Detection[];
  error?: string;
  responseCode?: number;
  processingTimeMs?: number;
  model?: { name: string; version?: string };
  /** True when the server replayed a stored result (`Idempotent-Replayed: true`). */
  replayed: boolean;
}

export interface BatchImageResult {
  imageUrl: string;
  requestId: string | null;
  status: 'DONE' | 'FAILED';
  success: boolean;
  error?: string;
  detections: Detection[];
  responseCode?: number;
}

export interface BatchResult {
  success: boolean;
  batchId?: string;
  totalImages: number;
  results: BatchImageResult[];
}

export type Rating = -1 | 0 | 1;

export interface FeedbackResult {
  requestId: string;
  rating: Rating;
  status: string;
  message: string;
}

/** Rate-limit headers of the last answer, when the server sent them. */
export interface RateLimitInfo {
  limit?: number;
  remaining?: number;
  resetSeconds?: number;
}
