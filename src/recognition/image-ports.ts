/**
 * The image ports of the recognition use case: what it needs from image intake (fetching
 * URLs, decoding) and from the image store, and how those fail. src/images implements them.
 */

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif';

export interface IntakeImage {
  bytes: Buffer;
  format: ImageFormat;
  /** e.g. image/jpeg */
  mime: string;
}

export interface FetchedImage extends IntakeImage {
  /** The URL finally read, after redirects. */
  finalUrl: string;
  /** Upstream HTTP status (200). */
  status: number;
}

/** SSRF-safe URL fetching. Throws ImageError (INVALID_IMAGE_URL before any connection, IMAGE_DOWNLOAD_FAILED after). */
export interface ImageFetcher {
  /** Checks scheme, length and the literal host without any lookup; throws ImageError INVALID_IMAGE_URL. */
  validate(url: string): void;
  fetch(url: string, options?: { signal?: AbortSignal }): Promise<FetchedImage>;
}

/** A stored image opened for streaming. */
export interface OpenedImage {
  body: NodeJS.ReadableStream;
  mime: string;
  size?: number;
  etag?: string;
  lastModified?: Date;
}

/** Where processed images are kept, under their request id. */
export interface ImageStore {
  put(requestId: string, image: { bytes: Buffer; mime: string }): Promise<void>;
  get(requestId: string): Promise<{ bytes: Buffer; mime: string } | null>;
  /** The image as a stream (the link route sends it without holding it in memory); null when absent. */
  open(requestId: string): Promise<OpenedImage | null>;
  /** Idempotent: deleting an absent image succeeds. */
  delete(requestId: string): Promise<void>;
  /** For /readyz: whether the store can be used now (absent: always). */
  ready?(): Promise<{ ok: boolean; detail?: string }>;
  /** Releases the store's client at shutdown (absent: nothing to release). */
  close?(): void | Promise<void>;
}

/** Signed, expiring URLs under the public base URL: /v1/cv/images/{id}?expires=…&signature=… */
export interface ImageUrlSigner {
  sign(requestId: string, now?: Date): string;
  /** 'valid', or why a link is refused (the signature-failure metric tells expiry from a bad secret). */
  check(requestId: string, expires: string | undefined, signature: string | undefined, now?: Date): 'valid' | 'expired' | 'invalid';
}

/** Failures of image intake and decoding, each with the contract's error code. */
export type ImageErrorCode =
  | 'INVALID_IMAGE_URL' // refused before any connection (scheme, length, address)
  | 'INVALID_IMAGE_BASE64'
  | 'UNSUPPORTED_IMAGE_FORMAT'
  | 'IMAGE_TOO_LARGE' // encoded bytes or pixel count over the limit
  | 'IMAGE_DOWNLOAD_FAILED' // DNS, refused, timeout, upstream 4xx/5xx, oversized body
  | 'IMAGE_DECODE_FAILED'; // bytes that look like an image but do not decode

export class ImageError extends Error {
  override readonly name = 'ImageError';
  constructor(
    readonly code: ImageErrorCode,
    message: string,
    /** Upstream HTTP status for download failures, when there was one. */
    readonly upstreamStatus?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The image store refused or did not answer a write. The recognition ends ERROR with this
 * message and response_code 503 (retry later), never DONE without its image.
 */
export class ImageStoreError extends Error {
  override readonly name = 'ImageStoreError';
  constructor(cause: unknown) {
    super(`image storage unavailable: ${(cause as Error)?.name && (cause as Error).name !== 'Error' ? (cause as Error).name : (cause as Error)?.message ?? String(cause)}`, { cause });
  }
}
