/** OpenAPI 3.1 document of the public operations (/openapi.json) and its reference UI (/docs). */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_KEY_HEADER } from './auth.js';
import { TAG } from './routes/recognition.js';

export async function registerOpenApi(app: FastifyInstance, options: { publicBaseUrl: string; version: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Computer Vision Recognition API',
        version: options.version,
        description: 'Detects labelled objects in images. Every error body carries error, message and error_code.',
      },
      servers: [{ url: options.publicBaseUrl }],
      tags: [
        { name: TAG, description: 'Recognition requests and feedback' },
        { name: 'Console', description: 'The console API under /console/api/v1: people, sessions, keys, usage (docs/console.md). Session tokens, never an x-api-key.' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER },
          consoleBearer: { type: 'http', scheme: 'bearer', description: 'A console access token from POST /console/api/v1/auth/login' },
          consoleCookie: { type: 'apiKey', in: 'cookie', name: 'rc_access', description: 'The web app: HttpOnly cookie plus x-csrf-token on unsafe methods. Named __Host-rc_access (and __Host-rc_refresh, __Host-rc_csrf) when the service is published over https' },
        },
      },
    },
    // Shared schemas appear under components/schemas by their $id (CVResult, Detection, ...).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
