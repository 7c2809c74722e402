/**
 * Where the API pods read the model catalog (MODEL_CATALOG), in this order:
 * 1. spec.api.catalogConfigMapRef: that ConfigMap key, mounted read-only;
 * 2. an s3:// model repository: `<storageUri>/<modelName>/catalog.json`, read over S3 with
 *    Triton's storageSecretRef credentials under the catalog's own names (MODEL_CATALOG_S3_*);
 * 3. a pvc:// model repository: the model's directory of the same claim, mounted read-only.
 * gs:// needs the ConfigMap (a CEL rule on the spec says so); without one (a resource admitted
 * before that rule) the API reads the catalog in its own image, as it did before.
 */
import type { StorageSecretKey } from '../../settings.js';
import type { EnvVar, RecognitionService } from '../api/types.js';
import { modelStorage } from './triton.js';

/** Where a catalog ConfigMap is mounted in the API container. */
const CATALOG_DIR = '/etc/recognition/catalog';
/** Where the model's directory of a pvc:// repository is mounted in the API container. */
const MODEL_DIR = '/etc/recognition/model';

export type CatalogSource =
  | { kind: 'configMap'; name: string; key: string }
  | { kind: 's3'; url: string }
  | { kind: 'pvc'; claimName: string; subPath: string }
  | { kind: 'image' };

export function catalogSource(rs: RecognitionService): CatalogSource {
  const ref = rs.spec.api.catalogConfigMapRef;
  if (ref) return { kind: 'configMap', name: ref.name, key: ref.key };
  const { storageUri, modelName } = rs.spec.triton;
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

/** A MODEL_CATALOG_S3_* credential from Triton's storage Secret, only for an s3:// catalog. */
export function catalogCredential(rs: RecognitionService, env: string, source: StorageSecretKey): EnvVar | undefined {
  const secret = rs.spec.triton.storageSecretRef;
  if (!secret || catalogSource(rs).kind !== 's3') return undefined;
  return { name: env, valueFrom: { secretKeyRef: { name: secret.name, key: source.storageSecretKey, ...(source.optional && { optional: true }) } } };
}

export function catalogMounts(rs: RecognitionService): unknown[] {
  const source = catalogSource(rs);
  if (source.kind === 'configMap') return [{ name: 'catalog', mountPath: CATALOG_DIR, readOnly: true }];
  if (source.kind === 'pvc') return [{ name: 'model-repository', mountPath: MODEL_DIR, subPath: source.subPath, readOnly: true }];
  return [];
}

export function catalogVolumes(rs: RecognitionService): unknown[] {
  const source = catalogSource(rs);
  if (source.kind === 'configMap') return [{ name: 'catalog', configMap: { name: source.name, items: [{ key: source.key, path: 'catalog.json' }] } }];
  if (source.kind === 'pvc') return [{ name: 'model-repository', persistentVolumeClaim: { claimName: source.claimName, readOnly: true } }];
  return [];
}
