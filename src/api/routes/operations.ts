/** Liveness, readiness and the signed image links. Never behind x-api-key. */
import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { ImageStore, ImageUrlSigner, OpenedImage } from '../../recognition/image-ports.js';
import { isUuid } from '../../recognition/ids.js';
import { ApiError } from '../errors.js';
import { withTimeout } from '../../deadline.js';

/** A failing check makes the service unready; a degraded one still serves, and says how. */
export type ReadinessCheck = () => Promise<{ ok: boolean; detail?: string; degraded?: boolean }>;

export interface OperationsRoutesOptions {
  checks: Record<string, ReadinessCheck>;
  imageStore: ImageStore;
  signer: ImageUrlSigner;
  /** Whether the retention sweep removed this request's image (the link then answers 410). */
  imageRemoved: (requestId: string) => Promise<boolean>;
  /** Counts a refused link (image_url_signature_failures_total). */
  countSignatureFailure?: (reason: 'expired' | 'invalid') => void;
}

const CHECK_TIMEOUT_MS = 2_000;

async function runCheck(check: ReadinessCheck): Promise<{ ok: boolean; detail?: string; degraded?: boolean }> {
  return withTimeout(check().catch((err: Error) => ({ ok: false, detail: err.message })), CHECK_TIMEOUT_MS, () => ({
    ok: false,
    detail: `no answer within ${CHECK_TIMEOUT_MS} ms`,
  }));
}

export const operationsRoutes: FastifyPluginAsync<OperationsRoutesOptions> = async (app, opts) => {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const names = Object.keys(opts.checks);
    const results = await Promise.all(names.map((n) => runCheck(opts.checks[n])));
    const state = (r: (typeof results)[number]) => (r.ok ? (r.degraded ? r.detail ?? 'degraded' : 'ok') : r.detail ?? 'not ready');
    const checks = Object.fromEntries(names.map((n, i) => [n, state(results[i])]));
    const failing = names.filter((_, i) => !results[i].ok);
    // Degraded dependencies (Redis) are named but do not fail readiness (CONTRACT.md, Operations).
    const degraded = names.filter((_, i) => results[i].ok && results[i].degraded === true);
    if (failing.length === 0) return { status: 'ready', checks, degraded };
    const e = new ApiError('NOT_READY', `not ready: ${failing.map((n) => `${n} (${checks[n]})`).join(', ')}`);
    reply.errorCode = e.code;
    return reply.code(503).send({ ...e.body(), status: 'not_ready', checks, degraded });
  });

  // The signature is the credential: image links work in a browser, without the API key.
  app.get<{ Params: { id: string }; Querystring: { expires?: string; signature?: string } }>(
    '/v1/cv/images/:id',
    { schema: { hide: true } },
    async (request, reply) => {
      const { id } = request.params;
      const { expires, signature } = request.query;
      const verdict = isUuid(id) ? opts.signer.check(id, expires, signature) : 'invalid';
      if (verdict !== 'valid') {
        opts.countSignatureFailure?.(verdict);
        throw new ApiError('INVALID_IMAGE_SIGNATURE');
      }
      let image: OpenedImage | null;
      try {
        image = await opts.imageStore.open(id);
      } catch (err) {
        request.log.warn({ err, requestId: id }, 'image store read failed');
        throw new ApiError('IMAGE_STORE_UNAVAILABLE');
      }
      if (image === null) throw new ApiError((await opts.imageRemoved(id)) ? 'IMAGE_EXPIRED' : 'IMAGE_NOT_FOUND');
      // An image never changes under its id, so caches may keep it as long as the link lives.
      const maxAge = Math.max(0, Number(expires) - Math.floor(Date.now() / 1000));
      void reply
        .header('Content-Type', image.mime)
        .header('Cache-Control', `private, max-age=${maxAge}, immutable`)
        .header('X-Content-Type-Options', 'nosniff');
      if (image.size !== undefined) void reply.header('Content-Length', image.size);
      if (image.etag !== undefined) void reply.header('ETag', image.etag);
      if (image.lastModified !== undefined) void reply.header('Last-Modified', image.lastModified.toUTCString());
      return reply.send(image.body);
    },
  );
};
