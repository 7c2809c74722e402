import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.js';

test('defaults describe the embedded setup', () => {
  const c = loadConfig({});
  assert.equal(c.port, 8080);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.redisUrl, undefined);
  assert.equal(c.tritonUrl, undefined);
  assert.equal(c.dataDir, path.resolve('.data'));
  assert.equal(c.publicBaseUrl, 'http://localhost:8080');
  assert.equal(c.modelCatalog, path.resolve('model-repository/centernet/catalog.json'));
  assert.equal(c.syncTimeoutMs, 29_000);
  assert.equal(c.rateLimitPerMinute, 10);
  assert.equal(c.lookupRateLimitPerMinute, 600);
  assert.equal(c.defaultMonthlyQuota, 10_000);
  assert.equal(c.imageMaxBase64Bytes, 10 * 1024 * 1024);
  assert.equal(c.imageMaxPixels, 40_000_000);
  assert.equal(c.inferenceThreads, os.availableParallelism());
  assert.deepEqual(c.imageFetchAllowCidrs, []);
  assert.ok(Object.isFrozen(c));
});

test('values are read, normalised and typed', () => {
  const c = loadConfig({
    PORT: '9000',
    DATABASE_URL: 'postgres://u:p@db:5432/recog',
    REDIS_URL: 'redis://cache:6379',
    TRITON_URL: 'grpc://triton:8001',
    PUBLIC_BASE_URL: 'https://cv.example.com/',
    IMAGE_FETCH_ALLOW_CIDRS: '10.0.0.0/8, fd00::/8',
    SCORE_THRESHOLD: '0.5',
    LOG_LEVEL: 'debug',
  });
  assert.equal(c.port, 9000);
  assert.equal(c.tritonUrl, 'triton:8001');
  assert.equal(c.publicBaseUrl, 'https://cv.example.com');
  assert.deepEqual(c.imageFetchAllowCidrs, ['10.0.0.0/8', 'fd00::/8']);
  assert.equal(c.scoreThreshold, 0.5);
  assert.equal(c.logLevel, 'debug');
});

test('every invalid value is reported at once, by name', () => {
  assert.throws(
    () =>
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        TRITON_URL: 'http://triton',
        SYNC_TIMEOUT_MS: '-1',
        SCORE_THRESHOLD: '2',
        LOG_LEVEL: 'loud',
        IMAGE_FETCH_ALLOW_CIDRS: '10.0.0.0',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      for (const name of ['PORT', 'DATABASE_URL', 'TRITON_URL', 'SYNC_TIMEOUT_MS', 'SCORE_THRESHOLD', 'LOG_LEVEL', 'IMAGE_FETCH_ALLOW_CIDRS']) {
        assert.match(err.message, new RegExp(`${name}`), `${name} named`);
      }
      return true;
    },
  );
});

test('MODEL_CATALOG: a file (resolved) or an s3://bucket/key URL (kept), with its own S3 settings', () => {
  assert.equal(loadConfig({ MODEL_CATALOG: 'cat.json' }).modelCatalog, path.resolve('cat.json'));
  const c = loadConfig({
    MODEL_CATALOG: 's3://models/triton/centernet/catalog.json',
    MODEL_CATALOG_S3_ENDPOINT: 'http://minio:9000',
    MODEL_CATALOG_S3_ACCESS_KEY_ID: 'id',
    MODEL_CATALOG_S3_SECRET_ACCESS_KEY: 'secret',
    S3_ENDPOINT: 'http://images:9000',
  });
  assert.equal(c.modelCatalog, 's3://models/triton/centernet/catalog.json');
  assert.equal(c.modelCatalogS3Endpoint, 'http://minio:9000');
  assert.equal(c.modelCatalogS3Region, 'us-east-1');
  assert.equal(c.modelCatalogS3ForcePathStyle, false);
  assert.equal(c.s3Endpoint, 'http://images:9000', 'the image store keeps its own');
  assert.throws(
    () => loadConfig({ MODEL_CATALOG: 's3://models', MODEL_CATALOG_S3_ACCESS_KEY_ID: 'id' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /MODEL_CATALOG must be a file or s3:\/\/bucket\/key \(got "s3:\/\/models"\)/);
      assert.match(err.message, /MODEL_CATALOG_S3_ACCESS_KEY_ID and MODEL_CATALOG_S3_SECRET_ACCESS_KEY are set together/);
      return true;
    },
  );
});

test('IMAGE_URL_MODE: api by default; presigned only with an S3 store, S3_PUBLIC_ENDPOINT a URL', () => {
  assert.equal(loadConfig({}).imageUrlMode, 'api');
  const c = loadConfig({ IMAGE_STORE: 's3://images/cv', IMAGE_URL_MODE: 'presigned', S3_PUBLIC_ENDPOINT: 'https://images.example.com' });
  assert.equal(c.imageUrlMode, 'presigned');
  assert.equal(c.s3PublicEndpoint, 'https://images.example.com');
  assert.throws(
    () => loadConfig({ IMAGE_URL_MODE: 'presigned', S3_PUBLIC_ENDPOINT: 'ftp://x' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /IMAGE_URL_MODE=presigned needs IMAGE_STORE=s3:\/\/bucket\/prefix/);
      assert.match(err.message, /S3_PUBLIC_ENDPOINT must be a URL with scheme http: or https:/);
      return true;
    },
  );
  assert.throws(() => loadConfig({ IMAGE_URL_MODE: 'direct' }), /IMAGE_URL_MODE must be one of api, presigned \(got "direct"\)/);
  assert.throws(() => loadConfig({ IMAGE_STORE: 's3://images/cv', IMAGE_URL_MODE: 'presigned', IMAGE_URL_TTL_SECONDS: '604801' }), /up to 604800 \(7 days/);
  assert.equal(loadConfig({ IMAGE_STORE: 's3://images/cv', IMAGE_URL_MODE: 'presigned', IMAGE_URL_TTL_SECONDS: '604800' }).imageUrlTtlSeconds, 604800);
});
