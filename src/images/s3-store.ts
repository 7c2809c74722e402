/**
 * ImageStore on S3-compatible object storage (AWS S3, MinIO, Ceph RGW, GCS interoperability):
 * one object per image at <prefix><id[0..2]>/<id>, its Content-Type the image's type. Every API
 * replica reads and writes the same bucket, so a link handed out by one pod works on all.
 * Credentials come from the SDK's default chain (env, shared files, web identity for IRSA).
 */
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { InvalidImageIdError, isImageId } from './local-store.js';
import type { ImageStore, OpenedImage } from './types.js';

/** SigV4's longest presign: 7 days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

const STORABLE = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);

export interface S3ImageStoreOptions {
  bucket: string;
  /** Key prefix, '' or ending in '/'. */
  prefix: string;
  /** e.g. http://minio:9000; unset: AWS's endpoint for the region. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Per-call time limit, in ms: a hung store fails the call instead of holding the request. */
  requestTimeoutMs?: number;
  /**
   * Host put into presigned links when clients reach the store by another address than the
   * service does (e.g. https://images.example.com outside, http://minio:9000 inside).
   */
  publicEndpoint?: string;
  /** Tests only: fixed credentials instead of the default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Parses IMAGE_STORE=s3://bucket/prefix; the prefix gets a trailing '/'. */
export function parseS3Location(uri: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  if (!m) throw new Error(`not an S3 location such as s3://bucket/prefix (got "${uri}")`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: m[1], prefix: prefix === '' ? '' : `${prefix}/` };
}

function isMissing(err: unknown): boolean {
  return err instanceof NoSuchKey || (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404);
}

export class S3ImageStore implements ImageStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly client: S3Client;
  /** Signs presigned links (no network): the client itself, or one for the public endpoint. */
  private readonly signingClient: S3Client;

  constructor(opts: S3ImageStoreOptions) {
    this.bucket = opts.bucket;
    this.prefix = opts.prefix;
    const timeout = opts.requestTimeoutMs ?? 10_000;
    this.client = new S3Client({
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.endpoint && { endpoint: opts.endpoint }),
      ...(opts.credentials && { credentials: opts.credentials }),
      // Two attempts: a store that is down fails in seconds, not after a long retry ladder.
      maxAttempts: 2,
      requestHandler: { connectionTimeout: Math.min(timeout, 3_000), requestTimeout: timeout },
    });
    this.signingClient = opts.publicEndpoint
      ? new S3Client({
          region: opts.region,
          forcePathStyle: opts.forcePathStyle,
          endpoint: opts.publicEndpoint,
          ...(opts.credentials && { credentials: opts.credentials }),
        })
      : this.client;
  }

  /** Sharded by the id's first two hex digits, which spreads keys over S3's partitions. */
  key(requestId: string): string {
    if (!isImageId(requestId)) throw new InvalidImageIdError(`image id must be a UUID (got ${JSON.stringify(String(requestId).slice(0, 64))})`);
    const id = requestId.toLowerCase();
    return `${this.prefix}${id.slice(0, 2)}/${id}`;
  }

  async put(requestId: string, image: { bytes: Buffer; mime: string }): Promise<void> {
    const mime = image.mime.toLowerCase();
    if (!STORABLE.has(mime)) throw new TypeError(`cannot store an image of type "${image.mime}"`);
    // A PUT is atomic in S3: readers see the old object or the new one, never part of one.
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.key(requestId), Body: image.bytes, ContentType: mime, ContentLength: image.bytes.length }),
    );
  }

  async open(requestId: string): Promise<OpenedImage | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(requestId) }));
      return {
        body: out.Body as Readable,
        mime: out.ContentType ?? 'application/octet-stream',
        size: out.ContentLength,
        etag: out.ETag,
        lastModified: out.LastModified,
      };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async get(requestId: string): Promise<{ bytes: Buffer; mime: string } | null> {
    const opened = await this.open(requestId);
    if (opened === null) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of opened.body) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks), mime: opened.mime };
  }

  /**
   * A presigned GET link valid for ttlSeconds: whoever holds it downloads the object from the
   * store directly, with the Content-Type stored at put. SigV4 caps a presign at 7 days.
   */
  async presignGet(requestId: string, ttlSeconds: number): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: this.key(requestId) });
    return getSignedUrl(this.signingClient, command, { expiresIn: Math.min(ttlSeconds, MAX_PRESIGN_SECONDS) });
  }

  async delete(requestId: string): Promise<void> {
    // Deleting a missing key succeeds in S3, so a repeated sweep is harmless.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(requestId) }));
  }

  /** For /readyz: the bucket exists and these credentials may use it. */
  async ready(): Promise<{ ok: boolean; detail?: string }> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return { ok: true };
    } catch (err) {
      const status = (err as S3ServiceException).$metadata?.httpStatusCode;
      const why = status === 404 ? 'no such bucket' : status === 403 ? 'access denied' : (err as Error).name || (err as Error).message;
      return { ok: false, detail: `s3://${this.bucket}: ${why}` };
    }
  }

  close(): void {
    this.client.destroy();
    if (this.signingClient !== this.client) this.signingClient.destroy();
  }
}
