/**
 * The model catalog: class index → label, product external id and (optionally) its own
 * score threshold, plus the served model's name, version and detector family with its
 * declared pre-processing. Prepared next to the model (`<repo>/<model>/catalog.json`)
 * and replaceable by the operator of the service (MODEL_CATALOG).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CENTERNET_SPEC, parseDetectorSpec, type DetectorSpec } from './detector-spec.js';

export interface CatalogClass {
  index: number;
  label: string;
  external_id: string;
  /** Lowest confidence reported for this class; the service's SCORE_THRESHOLD when absent. */
  threshold?: number;
}

export interface Catalog {
  model: { name: string; version: string };
  /** How to feed the model and read its outputs; CenterNet when the file has none. */
  detector: DetectorSpec;
  classes: CatalogClass[];
}

export async function loadCatalog(file: string): Promise<Catalog> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    // The built-in SSDLite (the accurate profile's partner by default) is prepared by name.
    const prepare = path.basename(path.dirname(file)) === 'ssdlite' ? 'npm run model:prepare -- --model ssdlite' : 'npm run model:prepare';
    throw new Error(`cannot read the model catalog ${file}: ${(err as Error).message} (run: ${prepare})`, { cause: err });
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
    if (!Number.isInteger(k?.index) || k.index < 0 || typeof k.label !== 'string' || k.label === '' || typeof k.external_id !== 'string' || k.external_id === '') {
      throw new Error(`${source}: bad class entry ${JSON.stringify(k)}`);
    }
    if (k.threshold !== undefined && !(typeof k.threshold === 'number' && k.threshold >= 0 && k.threshold <= 1)) {
      throw new Error(`${source}: class ${k.index} (${k.label}): threshold must be a number 0–1`);
    }
    if (seen.has(k.index)) throw new Error(`${source}: class index ${k.index} appears twice`);
    seen.add(k.index);
  }
  return {
    model: { name: c.model.name, version: c.model.version },
    detector: c.detector === undefined ? CENTERNET_SPEC : parseDetectorSpec(c.detector, source),
    classes: c.classes.map((k) => ({ index: k.index, label: k.label, external_id: k.external_id, ...(k.threshold === undefined ? {} : { threshold: k.threshold }) })),
  };
}
