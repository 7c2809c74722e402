/**
 * The TypeScript types of the published contract, generated from the OpenAPI document the
 * service serves (/openapi.json): the SDK and the web console read their wire shapes from
 * it, so neither can drift from the schemas the server validates and serialises with.
 * The document is built by the app itself, offline: its database and Triton are addresses
 * nothing listens on (the pool connects lazily; only closing the app tries one query, which
 * fails at once).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

export const API_TYPES_FILE = 'packages/client/src/openapi.ts';

const HEADER = `/**
 * The API's wire types, generated from its OpenAPI document by \`npm run api:generate\`
 * (tools/generate/openapi-types.ts). Do not edit: change the server's schemas and
 * regenerate; test/generated.test.ts fails when this file is stale.
 */
`;

const quiet = (): void => {};

/** The service's OpenAPI document, as GET /openapi.json serves it. */
async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'recog-openapi-'));
  const config = loadConfig({
    DATABASE_URL: 'postgres://openapi@127.0.0.1:1/openapi',
    DATA_DIR: dataDir,
    TRITON_URL: 'grpc://127.0.0.1:1',
    IMAGE_URL_SECRET: 'generating-the-openapi-document',
    PUBLIC_BASE_URL: 'http://localhost:8080',
    LOG_LEVEL: 'silent',
  });
  const db = knex({ client: 'pg', connection: config.databaseUrl, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 200, log: { warn: quiet, error: quiet, deprecate: quiet, debug: quiet } });
  const app = await buildApp({ config, db }, { logger: false, sweepAbandoned: false, sweepImages: false });
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    await db.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function renderApiTypes(): Promise<string> {
  // openapi-typescript reads the document itself; its own type for one is narrower than JSON.
  const ast = await openapiTS((await openApiDocument()) as unknown as Parameters<typeof openapiTS>[0]);
  return HEADER + astToString(ast);
}
