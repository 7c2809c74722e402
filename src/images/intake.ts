/** Builds the image intake parts from the configuration (one place, so every caller wires them alike). */
import path from 'node:path';
import type { Config } from '../config.js';
import { createImageFetcher } from './fetch.js';
import { LocalImageStore } from './local-store.js';
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
>;

export interface ImageIntake {
  fetcher: ImageFetcher;
  store: ImageStore;
  signer: ImageUrlSigner;
}

/** Images live under <dataDir>/images; the URL secret is IMAGE_URL_SECRET or <dataDir>/image-url-secret. */
export async function createImageIntake(config: ImageIntakeConfig): Promise<ImageIntake> {
  const secret = config.imageUrlSecret ?? (await loadOrCreateSecret(config.dataDir));
  return {
    fetcher: createImageFetcher({
      allowCidrs: config.imageFetchAllowCidrs,
      timeoutMs: config.imageFetchTimeoutMs,
      maxBytes: config.imageFetchMaxBytes,
      maxRedirects: config.imageFetchMaxRedirects,
    }),
    store: new LocalImageStore(path.join(config.dataDir, 'images')),
    signer: new HmacImageUrlSigner({ secret, publicBaseUrl: config.publicBaseUrl, ttlSeconds: config.imageUrlTtlSeconds }),
  };
}
