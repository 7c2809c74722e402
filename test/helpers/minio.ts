/**
 * A real S3 server for the image-store tests: the MinIO binary built by scripts/minio.sh,
 * started on 127.0.0.1 with a free port and a temporary data directory. Under CI=true a
 * missing binary fails the test; elsewhere the test skips and says what to run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { findBinary, freePort, killLocalServer, startLocalServer, type LocalServer } from './local-server.js';

export const MINIO_USER = 'recog-test';
export const MINIO_PASSWORD = 'recog-test-secret-key';

/** The MinIO binary, or a reason to skip (outside CI). Throws under CI=true. */
export function findMinio(): { bin: string } | { skip: string } {
  return findBinary('minio', 'MinIO', 'MINIO_BIN_DIR');
}

export interface MinioServer {
  endpoint: string;
  /** The settings an app needs to use `bucket` on this server (credentials: AWS_* in process.env). */
  env(bucket: string, prefix?: string): Record<string, string>;
  createBucket(name: string): Promise<void>;
  client(): S3Client;
  /** Kills the server (an outage); start() brings it back on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startMinio(bin: string): Promise<MinioServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recog-minio-'));
  const port = await freePort();
  const consolePort = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let server: LocalServer | undefined;

  const client = () =>
    new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD },
    });

  async function start(): Promise<void> {
    const args = ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'];
    const env = { ...process.env, MINIO_ROOT_USER: MINIO_USER, MINIO_ROOT_PASSWORD: MINIO_PASSWORD, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' };
    server = await startLocalServer('minio', { bin, args, env }, `${endpoint}/minio/health/ready`, 60_000);
  }

  async function stop(): Promise<void> {
    const s = server;
    server = undefined;
    await killLocalServer(s);
  }

  await start();
  return {
    endpoint,
    env: (bucket, prefix = 'images') => ({
      IMAGE_STORE: `s3://${bucket}/${prefix}`,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
    }),
    async createBucket(name) {
      const c = client();
      try {
        await c.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        c.destroy();
      }
    },
    client,
    stop,
    start,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
