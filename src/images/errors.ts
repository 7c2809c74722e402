/**
 * Failures of image intake and decoding, each with the contract's error code. Defined with
 * the image ports in src/recognition/image-ports.ts; re-exported for the adapters here.
 */
export { ImageError, ImageStoreError, type ImageErrorCode } from '../recognition/image-ports.js';
