/** Builds the image intake parts from the configuration (one place, so every caller wires them alike). */
import path from 'node:path';
import type { Config } from '../config.js';
import { createImageFetcher } from './fetch.js';
import { LocalImageStore } from './local-store.js';
import type { S3ImageStore } from './s3-store.js';
import { HmacImageUrlSigner, loadOrCreateSecret } from './signed-url.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner } from './types.js';

export type ImageIntakeConfig = Pick<
  Config,
  | 'dataDir'
  | 'publicBaseUrl'
  | 'imageFetchAllowCidrs'
  | 'imageFetchTimeoutMs'
  | 'imageFetchMaxBytes'
  | 'imageFetchMaxRedirects'
  | 'imageUrlSecret'
  | 'imageUrlTtlSeconds'
  | 'imageStore'
  | 's3Endpoint'
  | 's3Region'
  | 's3ForcePathStyle'
  | 's3PublicEndpoint'
  | 'imageUrlMode'
>;

export interface ImageIntake {
  fetcher: ImageFetcher;
  store: ImageStore;
  signer: ImageUrlSigner;
  /** IMAGE_URL_MODE=presigned: image_url in results is a presigned link to the bucket. */
  presign?: (requestId: string) => Promise<string>;
}

/** Images live under <dataDir>/images; the URL secret is IMAGE_URL_SECRET or <dataDir>/image-url-secret. */
export async function createImageIntake(config: ImageIntakeConfig): Promise<ImageIntake> {
  const secret = config.imageUrlSecret ?? (await loadOrCreateSecret(config.dataDir));
  const store = await createImageStore(config);
  return {
    fetcher: createImageFetcher({
      allowCidrs: config.imageFetchAllowCidrs,
      timeoutMs: config.imageFetchTimeoutMs,
      maxBytes: config.imageFetchMaxBytes,
      maxRedirects: config.imageFetchMaxRedirects,
    }),
    store,
    signer: new HmacImageUrlSigner({ secret, publicBaseUrl: config.publicBaseUrl, ttlSeconds: config.imageUrlTtlSeconds }),
    ...(config.imageUrlMode === 'presigned' && 'presignGet' in store
      ? { presign: (requestId: string) => store.presignGet(requestId, config.imageUrlTtlSeconds) }
      : {}),
  };
}

/**
 * IMAGE_STORE: `local` keeps images under <dataDir>/images; `s3://bucket/prefix` in a bucket
 * every replica shares. The AWS SDK is loaded only for the latter: about 4 MB of
 * the API's heap, which every full garbage collection walks (docs/performance.md, issue 30).
 */
export async function createImageStore(
  config: Pick<ImageIntakeConfig, 'dataDir' | 'imageStore' | 's3Endpoint' | 's3Region' | 's3ForcePathStyle'> & { s3PublicEndpoint?: string },
): Promise<LocalImageStore | S3ImageStore> {
  if (config.imageStore === 'local') return new LocalImageStore(path.join(config.dataDir, 'images'));
  const { S3ImageStore, parseS3Location } = await import('./s3-store.js');
  return new S3ImageStore({
    ...parseS3Location(config.imageStore),
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    forcePathStyle: config.s3ForcePathStyle,
    publicEndpoint: config.s3PublicEndpoint,
  });
}
