/**
 * Where the API reads its catalog (MODEL_CATALOG): a file (the image's own, a mounted
 * ConfigMap or model-repository claim) or an object in Triton's S3 model repository, next to
 * the model it describes (`s3://bucket/<repo>/<model>/catalog.json`). The S3 client has its
 * own settings (MODEL_CATALOG_S3_*): the model repository is not the image store.
 */
import type { Config } from '../config.js';
import { loadCatalog, parseCatalog, type Catalog } from './catalog.js';

export type CatalogConfig = Pick<
  Config,
  | 'modelCatalog'
  | 'modelCatalogS3Endpoint'
  | 'modelCatalogS3Region'
  | 'modelCatalogS3ForcePathStyle'
  | 'modelCatalogS3AccessKeyId'
  | 'modelCatalogS3SecretAccessKey'
  | 'modelCatalogS3SessionToken'
>;

/** A catalog is a few kB per hundred classes; anything this large is not one. */
const MAX_CATALOG_BYTES = 16 * 1024 * 1024;

/** Read over the network: it may appear (or be fixed) after the API started. */
export function isRemoteCatalog(location: string): boolean {
  return location.startsWith('s3://');
}

export function parseS3Object(url: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  if (!m) throw new Error(`not an S3 object such as s3://bucket/key (got "${url}")`);
  return { bucket: m[1], key: m[2] };
}

export async function readCatalog(config: CatalogConfig): Promise<Catalog> {
  const location = config.modelCatalog;
  if (!isRemoteCatalog(location)) return loadCatalog(location);
  const { bucket, key } = parseS3Object(location);
  // Loaded only for a catalog in S3: the AWS SDK is a large part of a process's heap.
  const { GetObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    region: config.modelCatalogS3Region,
    forcePathStyle: config.modelCatalogS3ForcePathStyle,
    ...(config.modelCatalogS3Endpoint ? { endpoint: config.modelCatalogS3Endpoint } : { followRegionRedirects: true }),
    ...(config.modelCatalogS3AccessKeyId &&
      config.modelCatalogS3SecretAccessKey && {
        credentials: {
          accessKeyId: config.modelCatalogS3AccessKeyId,
          secretAccessKey: config.modelCatalogS3SecretAccessKey,
          ...(config.modelCatalogS3SessionToken && { sessionToken: config.modelCatalogS3SessionToken }),
        },
      }),
    // The caller retries with backoff: one read fails in seconds, not after a long ladder.
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 10_000 },
  });
  let raw: unknown;
  try {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if ((res.ContentLength ?? 0) > MAX_CATALOG_BYTES) throw new Error(`${res.ContentLength} bytes, more than a catalog's ${MAX_CATALOG_BYTES}`);
    const text = await res.Body!.transformToString('utf8');
    raw = JSON.parse(text);
  } catch (err) {
    const e = err as Error;
    // S3's errors name the cause (NoSuchKey, AccessDenied, NoSuchBucket); keep that name.
    const what = e.name && e.name !== 'Error' && !e.message.startsWith(e.name) ? `${e.name}: ${e.message}` : e.message;
    throw new Error(`cannot read the model catalog ${location}: ${what}`, { cause: err });
  } finally {
    client.destroy();
  }
  return parseCatalog(raw, location);
}
