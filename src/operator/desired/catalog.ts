/**
 * Where the API pods read the model catalog (MODEL_CATALOG), in this order:
 * 1. spec.api.catalogConfigMapRef: that ConfigMap key, mounted read-only;
 * 2. an s3:// model repository: `<storageUri>/<modelName>/catalog.json`, read over S3 with
 *    Triton's storageSecretRef credentials under the catalog's own names (MODEL_CATALOG_S3_*);
 * 3. a pvc:// model repository: the model's directory of the same claim, mounted read-only.
 * gs:// needs the ConfigMap (a CEL rule on the spec says so); without one (a resource admitted
 * before that rule) the API reads the catalog in its own image, as it did before.
 *
 * A canary of another model (spec.canary.modelName) has its own catalog, CANARY_MODEL_CATALOG,
 * from the same place: the ConfigMap's canaryKey (a CEL rule requires it then), that model's
 * directory of the s3:// repository, or that directory of the pvc:// claim mounted beside the
 * stable one. A canary of another version of the same model shares the stable catalog (the API's
 * default): versions of one model have one catalog.json, so new labels call for a new model name.
 */
import type { StorageSecretKey } from '../../settings.js';
import type { EnvVar, RecognitionService } from '../api/types.js';
import { modelStorage } from './triton.js';
import { canaryModel } from './rollout.js';

/** Where a catalog ConfigMap is mounted in the API container. */
const CATALOG_DIR = '/etc/recognition/catalog';
/** Where the model's directory of a pvc:// repository is mounted in the API container. */
const MODEL_DIR = '/etc/recognition/model';
/** ... and the canary model's directory, when the canary is another model. */
const CANARY_MODEL_DIR = '/etc/recognition/canary-model';
/** The canary's catalog in the mounted ConfigMap directory. */
const CANARY_CATALOG_FILE = 'canary-catalog.json';

export type CatalogSource =
  | { kind: 'configMap'; name: string; key: string }
  | { kind: 's3'; url: string }
  | { kind: 'pvc'; claimName: string; subPath: string }
  | { kind: 'image' };

export function catalogSource(rs: RecognitionService): CatalogSource {
  const ref = rs.spec.api.catalogConfigMapRef;
  if (ref) return { kind: 'configMap', name: ref.name, key: ref.key };
  return repositoryCatalog(rs, rs.spec.triton.modelName);
}

/** The canary model's catalog, or undefined: no canary, a canary of the stable model, or no ConfigMap key for it. */
export function canaryCatalogSource(rs: RecognitionService): CatalogSource | undefined {
  const canary = canaryModel(rs);
  if (!canary?.otherModel) return undefined;
  const ref = rs.spec.api.catalogConfigMapRef;
  if (ref) return ref.canaryKey === undefined ? undefined : { kind: 'configMap', name: ref.name, key: ref.canaryKey };
  const source = repositoryCatalog(rs, canary.name);
  return source.kind === 'image' ? undefined : source;
}

/** `<storageUri>/<modelName>/catalog.json`, as the API reads it from the model repository. */
function repositoryCatalog(rs: RecognitionService, modelName: string): CatalogSource {
  const { storageUri } = rs.spec.triton;
  if (storageUri.startsWith('s3://')) return { kind: 's3', url: `${storageUri.replace(/\/+$/, '')}/${modelName}/catalog.json` };
  const storage = modelStorage(storageUri);
  if (storage.claimName) {
    const sub = /^pvc:\/\/[^/]+(\/.*)?$/.exec(storageUri)?.[1] ?? '';
    const subPath = [...sub.split('/').filter(Boolean), modelName].join('/');
    return { kind: 'pvc', claimName: storage.claimName, subPath };
  }
  return { kind: 'image' };
}

/** MODEL_CATALOG; undefined: the default, the catalog in the API's image. */
export function catalogLocation(rs: RecognitionService): string | undefined {
  const source = catalogSource(rs);
  switch (source.kind) {
    case 'configMap':
      return `${CATALOG_DIR}/catalog.json`;
    case 's3':
      return source.url;
    case 'pvc':
      return `${MODEL_DIR}/catalog.json`;
    case 'image':
      return undefined;
  }
}

/** CANARY_MODEL_CATALOG; undefined: none (the API's default, the stable catalog). */
export function canaryCatalogLocation(rs: RecognitionService): string | undefined {
  const source = canaryCatalogSource(rs);
  switch (source?.kind) {
    case 'configMap':
      return `${CATALOG_DIR}/${CANARY_CATALOG_FILE}`;
    case 's3':
      return source.url;
    case 'pvc':
      return `${CANARY_MODEL_DIR}/catalog.json`;
    default:
      return undefined;
  }
}

/** A MODEL_CATALOG_S3_* credential from Triton's storage Secret, only for an s3:// catalog. */
export function catalogCredential(rs: RecognitionService, env: string, source: StorageSecretKey): EnvVar | undefined {
  const secret = rs.spec.triton.storageSecretRef;
  if (!secret || catalogSource(rs).kind !== 's3') return undefined;
  return { name: env, valueFrom: { secretKeyRef: { name: secret.name, key: source.storageSecretKey, ...(source.optional && { optional: true }) } } };
}

export function catalogMounts(rs: RecognitionService): unknown[] {
  const source = catalogSource(rs);
  const canary = canaryCatalogSource(rs);
  // The canary's ConfigMap key is one more file of the same mounted volume.
  if (source.kind === 'configMap') return [{ name: 'catalog', mountPath: CATALOG_DIR, readOnly: true }];
  if (source.kind === 'pvc') {
    return [
      { name: 'model-repository', mountPath: MODEL_DIR, subPath: source.subPath, readOnly: true },
      ...(canary?.kind === 'pvc' ? [{ name: 'model-repository', mountPath: CANARY_MODEL_DIR, subPath: canary.subPath, readOnly: true }] : []),
    ];
  }
  return [];
}

export function catalogVolumes(rs: RecognitionService): unknown[] {
  const source = catalogSource(rs);
  const canary = canaryCatalogSource(rs);
  if (source.kind === 'configMap') {
    const items = [{ key: source.key, path: 'catalog.json' }, ...(canary?.kind === 'configMap' ? [{ key: canary.key, path: CANARY_CATALOG_FILE }] : [])];
    return [{ name: 'catalog', configMap: { name: source.name, items } }];
  }
  if (source.kind === 'pvc') return [{ name: 'model-repository', persistentVolumeClaim: { claimName: source.claimName, readOnly: true } }];
  return [];
}
