/**
 * The catalog read from the model repository on S3 (MODEL_CATALOG=s3://bucket/key) against a
 * real S3 server (MinIO, scripts/minio.sh), with the catalog's own endpoint and credentials
 * (MODEL_CATALOG_S3_*, not the AWS chain): detections are labelled from the uploaded catalog;
 * a missing object keeps the API unready naming the URL and S3's error, until it is uploaded;
 * a catalog with more classes than the model outputs keeps it unready saying so, until fixed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config.js';
import { readCatalog } from '../../src/models/catalog-source.js';
import { DEFAULT_TRIAL_IMAGE } from '../../tools/model/import-cli.js';
import { importModel } from '../../tools/model/import.js';
import { buildTestApp, json, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { findMinio, startMinio, MINIO_PASSWORD, MINIO_USER, type MinioServer } from '../helpers/minio.js';
import { optionalWeights, yolo12nPath } from '../helpers/weights.js';

const found = findMinio();
const skip = 'skip' in found ? found.skip : false;
const BUCKET = 'models';

interface CatalogJson {
  model: { name: string; version: string };
  classes: Array<{ index: number; label: string; external_id: string }>;
}

describe('MODEL_CATALOG on S3', { skip }, () => {
  let minio: MinioServer;
  let centernet: CatalogJson;
  const apps: TestApp[] = [];

  before(async () => {
    if (!('bin' in found)) return;
    minio = await startMinio(found.bin);
    await minio.createBucket(BUCKET);
    centernet = JSON.parse(await readFile(path.join(REPO_ROOT, 'model-repository', 'centernet', 'catalog.json'), 'utf8')) as CatalogJson;
  });
  after(async () => {
    for (const a of apps) await a.close().catch(() => {});
    await minio?.close();
  });

  const put = async (key: string, body: unknown) => {
    const c = minio.client();
    try {
      await c.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: JSON.stringify(body), ContentType: 'application/json' }));
    } finally {
      c.destroy();
    }
  };
  /** The catalog's own S3 settings; the image store stays local and no AWS_* is set. */
  const catalogEnv = (key: string): Record<string, string> => ({
    MODEL_CATALOG: `s3://${BUCKET}/${key}`,
    MODEL_CATALOG_S3_ENDPOINT: minio.endpoint,
    MODEL_CATALOG_S3_FORCE_PATH_STYLE: 'true',
    MODEL_CATALOG_S3_ACCESS_KEY_ID: MINIO_USER,
    MODEL_CATALOG_S3_SECRET_ACCESS_KEY: MINIO_PASSWORD,
  });
  const app = async (env: Record<string, string>) => {
    const t = await buildTestApp(env);
    apps.push(t);
    return t;
  };
  const readyz = async (t: TestApp) => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    return { status: res.statusCode, inference: json<{ checks: Record<string, string> }>(res).checks.inference };
  };
  const recognise = async (t: TestApp, image: 'basketball1.png' | 'camera.png') => {
    const key = await t.newKey();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/cv/requests/sync',
      headers: { 'x-api-key': key.key },
      payload: { external_id: `s3-catalog-${Date.now()}`, image_base64: readFixture(image).toString('base64') },
    });
    return json<{ status: string; error?: string; results: Array<{ label: string; external_id: string }> }>(res);
  };

  test('detections carry the labels and product ids of the catalog uploaded next to the model', async () => {
    const relabelled = { ...centernet, classes: centernet.classes.map((c) => ({ ...c, label: `${c.label}-s3`, external_id: `sku-${c.index}` })) };
    await put('repo/centernet/catalog.json', relabelled);
    const t = await app(catalogEnv('repo/centernet/catalog.json'));
    await eventually(async () => (await readyz(t)).status === 200, { what: 'the API ready' });
    const body = await recognise(t, 'basketball1.png');
    assert.equal(body.status, 'DONE', JSON.stringify(body));
    assert.ok(body.results.length > 0);
    const person = body.results.find((d) => d.label === 'person-s3');
    assert.ok(person, `a person, labelled from the S3 catalog: ${JSON.stringify(body.results)}`);
    assert.equal(person.external_id, 'sku-0');
    assert.ok(body.results.every((d) => d.label.endsWith('-s3') && /^sku-\d+$/.test(d.external_id)));
  });

  test('a missing catalog keeps the API unready, naming the URL and the S3 error; uploaded, it is taken without a restart', async () => {
    const t = await app(catalogEnv('late/centernet/catalog.json'));
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'the API listens meanwhile');
    await eventually(async () => /NoSuchKey/.test((await readyz(t)).inference ?? ''), { what: '/readyz naming NoSuchKey' });
    const unready = await readyz(t);
    assert.equal(unready.status, 503);
    assert.match(unready.inference, /^model not ready: cannot read the model catalog s3:\/\/models\/late\/centernet\/catalog\.json: NoSuchKey/);
    const early = await recognise(t, 'camera.png');
    assert.equal(early.status, 'ERROR', 'refused cleanly while the catalog is missing');

    await put('late/centernet/catalog.json', centernet);
    await eventually(async () => (await readyz(t)).status === 200, { what: 'ready once the catalog is there', timeoutMs: 40_000 });
    const body = await recognise(t, 'basketball1.png');
    assert.equal(body.status, 'DONE');
    assert.ok(body.results.some((d) => d.label === 'person' && d.external_id === 'coco:1'), JSON.stringify(body.results));
  });

  test('wrong credentials are named too (AccessDenied / InvalidAccessKeyId), not a hang', async () => {
    const config = loadConfig({ ...catalogEnv('repo/centernet/catalog.json'), MODEL_CATALOG_S3_SECRET_ACCESS_KEY: 'not-the-key' });
    await assert.rejects(readCatalog(config), /cannot read the model catalog s3:\/\/models\/repo\/centernet\/catalog\.json: (SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId)/);
  });

  test('a catalog with more classes than the model outputs keeps the API unready, saying so; a fitting one is then taken', async (t) => {
    const weights = optionalWeights(yolo12nPath(), 'scripts/yolo12n.sh');
    if (!weights) return t.skip(`${yolo12nPath()} is missing: run scripts/yolo12n.sh`);
    const repo = await mkdtemp(path.join(os.tmpdir(), 'recog-s3-catalog-'));
    try {
      await importModel({ file: weights, repository: repo, name: 'yolo12n', trialImage: DEFAULT_TRIAL_IMAGE, threads: 1 });
      const fitting = JSON.parse(await readFile(path.join(repo, 'yolo12n', 'catalog.json'), 'utf8')) as CatalogJson;
      const tooMany = { ...fitting, classes: [...fitting.classes, { index: 80, label: 'shopping cart', external_id: 'sku-cart' }] };
      await put('yolo/yolo12n/catalog.json', tooMany);
      const a = await app({ ...catalogEnv('yolo/yolo12n/catalog.json'), MODEL_REPOSITORY: repo, MODEL_NAME: 'yolo12n' });
      const why = /does not fit the served model "yolo12n": it maps 81 classes \(index 80, shopping cart beyond the model's 80\)/;
      await eventually(async () => why.test((await readyz(a)).inference ?? ''), { what: `/readyz matching ${why}` });
      assert.equal((await readyz(a)).status, 503);

      await put('yolo/yolo12n/catalog.json', fitting);
      await eventually(async () => (await readyz(a)).status === 200, { what: 'ready once a fitting catalog is there', timeoutMs: 40_000 });
      const body = await recognise(a, 'basketball1.png');
      assert.ok(body.results.some((d) => d.label === 'person'), JSON.stringify(body));
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
