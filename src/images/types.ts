/**
 * Image intake contracts shared by the API and the recognition use case. They are ports of
 * the use case, defined in src/recognition/image-ports.ts (recognition imports no adapter);
 * re-exported here for the adapters in src/images and their callers.
 */
export type {
  FetchedImage,
  ImageFetcher,
  ImageFormat,
  ImageStore,
  ImageUrlSigner,
  IntakeImage,
  OpenedImage,
} from '../recognition/image-ports.js';
