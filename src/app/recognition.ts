/**
 * The recognition use case on the app's dependencies: the repositories on the database, the
 * detector behind this app's capacity gate. At close, after the HTTP requests drained (or
 * the drain bound cut them off), it ends whatever this instance left unfinished.
 */
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { decodeBase64Image } from '../images/base64.js';
import type { IntakeImage } from '../images/types.js';
import { CapacityGate, gateDetector } from '../recognition/capacity.js';
import { RecognitionService } from '../recognition/service.js';
import { PgFeedbackRepository } from '../store/feedback.js';
import { PgRequestRepository, closeInstanceRequests } from '../store/requests.js';
import type { Metrics } from '../telemetry/metrics.js';

export interface RecognitionOptions {
  config: Readonly<Config>;
  metrics: Metrics;
  /** Tags this instance's requests (shutdown closes only its own). */
  instanceId: string;
  decodeBase64?: (input: string, maxEncodedBytes: number) => IntakeImage;
  /** The capacity gate of decode/inference (default: from config.detectConcurrency and detectQueueLength). */
  detectGate?: CapacityGate;
}

export const recognition = fp<RecognitionOptions>(
  async (app, { config, metrics, instanceId, ...opts }) => {
    const { db, images } = app;
    const detectGate = opts.detectGate ?? new CapacityGate(config.detectConcurrency, config.detectQueueLength);
    app.decorate('detectGate', detectGate);
    app.decorate(
      'recognition',
      new RecognitionService({
        observer: {
          recognition: (outcome, mode) => metrics.countRecognition(outcome, mode),
          batchSize: (n) => metrics.observeBatchSize(n),
          feedback: (model, rating) => metrics.countModelFeedback(model, rating),
        },
        requests: new PgRequestRepository(db, instanceId),
        feedback: new PgFeedbackRepository(db),
        detector: gateDetector(app.detector, detectGate),
        fetcher: images.fetcher,
        decodeBase64: opts.decodeBase64 ?? decodeBase64Image,
        imageStore: images.store,
        signer: images.signer,
        presignImage: images.presign,
        settings: { syncTimeoutMs: config.syncTimeoutMs, batchConcurrency: config.batchConcurrency, maxBase64Bytes: config.imageMaxBase64Bytes },
        logger: {
          warn: (obj, msg) => app.log.warn(obj, msg),
          error: (obj, msg) => app.log.error(obj, msg),
        },
      }),
    );
    app.addHook('onClose', async () => {
      const n = await closeInstanceRequests(db, instanceId).catch(() => 0);
      if (n > 0) app.log.warn({ count: n }, 'closed unfinished requests at shutdown');
    });
  },
  { name: 'recognition', fastify: '5.x', dependencies: ['database', 'inference', 'image-store'] },
);

declare module 'fastify' {
  interface FastifyInstance {
    recognition: RecognitionService;
    detectGate: CapacityGate;
  }
}
