/**
 * `npm run generate`: writes the RecognitionService CRD (crds/ and the operator chart's
 * copy) from src/operator/api/schema.ts, the README's configuration table from
 * src/settings.ts, and the API's wire types (packages/client/src/openapi.ts) from the
 * OpenAPI document the service serves. test/generated.test.ts fails when a committed file
 * differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_FILES, renderCrd, withConfigTable } from './generate/render.js';
import { API_TYPES_FILE, renderApiTypes } from './generate/openapi-types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function write(file: string, text: string): void {
  const full = path.join(ROOT, file);
  const changed = !fs.existsSync(full) || fs.readFileSync(full, 'utf8') !== text;
  if (changed) fs.writeFileSync(full, text);
  console.log(`${changed ? 'wrote    ' : 'unchanged'} ${file}`);
}

const crd = renderCrd();
for (const file of CRD_FILES) write(file, crd);
write('README.md', withConfigTable(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')));
write(API_TYPES_FILE, await renderApiTypes());
