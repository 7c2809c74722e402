/** Liveness, readiness and the signed image links. Never behind x-api-key. */
import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { ImageStore, ImageUrlSigner } from '../../images/types.js';
import { isUuid } from '../../store/db.js';
import { ApiError } from '../errors.js';
import { withTimeout } from '../../deadline.js';

/** A failing check makes the service unready; a degraded one still serves, and says how. */
export type ReadinessCheck = () => Promise<{ ok: boolean; detail?: string; degraded?: boolean }>;

export interface OperationsRoutesOptions {
  checks: Record<string, ReadinessCheck>;
  imageStore: ImageStore;
  signer: ImageUrlSigner;
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
      if (!isUuid(id) || typeof expires !== 'string' || typeof signature !== 'string' || !opts.signer.verify(id, expires, signature)) {
        throw new ApiError('INVALID_IMAGE_SIGNATURE');
      }
      const image = await opts.imageStore.get(id);
      if (image === null) throw new ApiError('IMAGE_NOT_FOUND');
      return reply
        .header('Content-Type', image.mime)
        .header('Cache-Control', 'private, max-age=3600')
        .header('X-Content-Type-Options', 'nosniff')
        .send(image.bytes);
    },
  );
};
