/**
 * Image intake: the SSRF-safe fetcher, the store (local or S3) and the URL signer, with
 * their spans and metrics. Passed in, they are the caller's; otherwise the plugin opens them
 * from the configuration and releases the store's client with the app.
 */
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { createImageIntake } from '../images/intake.js';
import type { ImageFetcher, ImageStore, ImageUrlSigner } from '../images/types.js';
import { instrumentFetcher, instrumentImageStore } from '../telemetry/instrument.js';
import type { Metrics } from '../telemetry/metrics.js';

export interface Images {
  fetcher: ImageFetcher;
  store: ImageStore;
  signer: ImageUrlSigner;
  /** IMAGE_URL_MODE=presigned: image_url in results is a presigned store link. */
  presign?: (requestId: string) => Promise<string>;
}

export interface ImageStoreOptions {
  config: Readonly<Config>;
  metrics: Metrics;
  images?: Images;
}

export const imageStore = fp<ImageStoreOptions>(
  async (app, opts) => {
    let images = opts.images;
    if (images === undefined) {
      const intake = await createImageIntake(opts.config);
      app.addHook('onClose', async () => intake.store.close?.());
      images = { fetcher: instrumentFetcher(intake.fetcher, opts.metrics), store: instrumentImageStore(intake.store), signer: intake.signer, presign: intake.presign };
    }
    app.decorate('images', images);
    const ready = images.store.ready?.bind(images.store);
    if (ready) app.readiness.imageStore = ready;
  },
  { name: 'image-store', fastify: '5.x', dependencies: ['readiness'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    images: Images;
  }
}
