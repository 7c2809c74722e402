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
