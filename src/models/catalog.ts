/**
 * The model catalog: class index → label and product external id, plus the served
 * model's name and version. Prepared next to the model (`<repo>/<model>/catalog.json`)
 * and replaceable by the operator of the service (MODEL_CATALOG).
 */
import { readFile } from 'node:fs/promises';

export interface CatalogClass {
  index: number;
  label: string;
  external_id: string;
}

export interface Catalog {
  model: { name: string; version: string };
  classes: CatalogClass[];
}

export async function loadCatalog(file: string): Promise<Catalog> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the model catalog ${file}: ${(err as Error).message} (run: npm run model:prepare)`, { cause: err });
  }
  return parseCatalog(raw, file);
}

export function parseCatalog(raw: unknown, source = 'catalog'): Catalog {
  const c = raw as Partial<Catalog>;
  if (!c || typeof c !== 'object' || !c.model || typeof c.model.name !== 'string' || typeof c.model.version !== 'string' || !Array.isArray(c.classes)) {
    throw new Error(`${source}: expected {model: {name, version}, classes: [{index, label, external_id}]}`);
  }
  const seen = new Set<number>();
  for (const k of c.classes) {
    if (!Number.isInteger(k?.index) || typeof k.label !== 'string' || k.label === '' || typeof k.external_id !== 'string' || k.external_id === '') {
      throw new Error(`${source}: bad class entry ${JSON.stringify(k)}`);
    }
    if (seen.has(k.index)) throw new Error(`${source}: class index ${k.index} appears twice`);
    seen.add(k.index);
  }
  return { model: { name: c.model.name, version: c.model.version }, classes: c.classes.map((k) => ({ index: k.index, label: k.label, external_id: k.external_id })) };
}
