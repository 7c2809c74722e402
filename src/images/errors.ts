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
