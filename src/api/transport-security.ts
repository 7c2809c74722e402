/**
 * HTTP Strict Transport Security. When the service is published over https (PUBLIC_BASE_URL),
 * every answer, the API's and the console's, errors and 404s included, tells browsers to use
 * only https for this host and its subdomains for a year (ASVS 14.4.5). Over plain http (local
 * development) nothing is sent: the header would be meaningless there and would pin
 * `localhost` to https in the developer's browser.
 */
import type { FastifyInstance } from 'fastify';

export const HSTS = 'max-age=31536000; includeSubDomains';

/** Adds the header to every response of `app` (call on the root instance, before the routes). */
export function installHsts(app: FastifyInstance, publicBaseUrl: string): void {
  if (!publicBaseUrl.startsWith('https:')) return;
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply.header('Strict-Transport-Security', HSTS);
    return payload;
  });
}
