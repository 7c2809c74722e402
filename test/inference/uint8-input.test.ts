/**
 * UINT8 pixels over the wire: the prepared CenterNet takes UINT8 [N,512,512,3] and casts to
 * float inside its graph. Served embedded and through the local v2 server (the code of
 * `recog inference-server`, over real gRPC), it finds what the same graph with an FP32
 * input finds (the model a user brings), each request carries 512×512×3 bytes instead of
 * four times that, and the FP32 model still works on both paths.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { InferenceBackend, Tensor } from '../../src/inference/backend.js';
import { createInferenceBackend } from '../../src/inference/create-backend.js';
import { Detector } from '../../src/inference/detector.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { encodeTensorData } from '../../src/inference/triton/tensor-codec.js';
import { startV2Server, type V2Server } from '../../src/inference/v2-server/server.js';
import { renderTritonConfig, centernetTritonConfig } from '../../src/models/triton-config.js';
import type { Detection } from '../../src/recognition/detection.js';
import { centernetCatalog } from '../../tools/model/centernet.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { floatInputFromUint8 } from '../helpers/onnx-edit.js';
import { testConfig } from './model.js';

const U8 = 'centernet';
const F32 = 'centernet-fp32';
const PIXELS = 512 * 512 * 3;

/** The real backend, with the byte size of each input as the Triton client encodes it. */
function recording(backend: InferenceBackend, sizes: number[]): InferenceBackend {
  return Object.assign(Object.create(backend) as InferenceBackend, {
    infer(inputs: Tensor[], options?: Parameters<InferenceBackend['infer']>[1]) {
      for (const t of inputs) sizes.push(encodeTensorData(t).byteLength);
      return backend.infer(inputs, options);
    },
  });
}

describe('UINT8 model input', () => {
  let repo: string;
  let server: V2Server;
  let photos: Record<string, Buffer>;
  const backends: InferenceBackend[] = [];
  const sizes: Record<string, number[]> = {};
  const detectors: Record<string, Detector> = {};

  before(async () => {
    repo = await mkdtemp(path.join(os.tmpdir(), 'recog-uint8-'));
    await cp(path.join(REPO_ROOT, 'model-repository', U8), path.join(repo, U8), { recursive: true });
    // A user's FP32 model: the same graph without the Cast, its input FLOAT.
    await mkdir(path.join(repo, F32, '1'), { recursive: true });
    await writeFile(path.join(repo, F32, '1', 'model.onnx'), floatInputFromUint8(await readFile(path.join(repo, U8, '1', 'model.onnx'))));
    const config = centernetTritonConfig(F32);
    await writeFile(path.join(repo, F32, 'config.pbtxt'), renderTritonConfig({ ...config, inputs: config.inputs.map((t) => ({ ...t, dataType: 'TYPE_FP32' })) }));
    await writeFile(path.join(repo, F32, 'catalog.json'), JSON.stringify(centernetCatalog(F32)));

    server = await startV2Server({
      modelRepository: repo,
      host: '127.0.0.1',
      grpcPort: 0,
      httpPort: null,
      createBackend: (m) => new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 }),
    });
    for (const model of [U8, F32]) {
      for (const via of ['embedded', 'v2'] as const) {
        const config = testConfig({ MODEL_REPOSITORY: repo, MODEL_NAME: model, INFERENCE_THREADS: '1', ...(via === 'v2' ? { TRITON_URL: server.grpcAddress, TRITON_MODEL_NAME: model } : {}) });
        const backend = await createInferenceBackend(config);
        backends.push(backend);
        await backend.start();
        const key = `${model} ${via}`;
        sizes[key] = [];
        detectors[key] = new Detector(recording(backend, sizes[key]), centernetCatalog(model), { scoreThreshold: config.scoreThreshold, nmsIou: config.nmsIou, maxPixels: config.imageMaxPixels });
      }
    }
    photos = {
      'basketball1.png': readFixture('basketball1.png'), // 640×480: width shrunk, height enlarged
      'camera.png': readFixture('camera.png'), // 512×512: copied as it is
      'squirrel_cls.jpg': readFixture('squirrel_cls.jpg'), // 535×426: height enlarged
      // 1280×960: shrunk on both axes, libvips' own buffer is the tensor.
      'basketball 1280×960 JPEG': await sharp(readFixture('basketball1.png')).resize(1280, 960).jpeg({ quality: 92 }).toBuffer(),
    };
  });

  after(async () => {
    for (const b of backends) await b.close().catch(() => {});
    await server?.close({ graceMs: 500 });
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  async function detectAll(key: string): Promise<Record<string, Detection[]>> {
    const out: Record<string, Detection[]> = {};
    for (const [name, bytes] of Object.entries(photos)) out[name] = (await detectors[key].detect(bytes)).detections;
    return out;
  }

  test('each detector sends what its served model takes', () => {
    assert.equal(detectors[`${U8} embedded`].inputType, 'UINT8');
    assert.equal(detectors[`${U8} v2`].inputType, 'UINT8');
    assert.equal(detectors[`${F32} embedded`].inputType, 'FP32');
    assert.equal(detectors[`${F32} v2`].inputType, 'FP32');
  });

  test('the UINT8 model gives the same detections embedded and through the v2 server, and the FP32 model its own both ways', async () => {
    for (const model of [U8, F32]) {
      const embedded = await detectAll(`${model} embedded`);
      const remote = await detectAll(`${model} v2`);
      assert.deepEqual(remote, embedded, `${model}: the same detections both ways`);
    }
  });

  test('UINT8 and FP32 models agree: exactly where no axis is enlarged, within rounding (1 px, 0.01) where one is', async () => {
    const u8 = await detectAll(`${U8} embedded`);
    const f32 = await detectAll(`${F32} embedded`);
    assert.deepEqual(u8['camera.png'], f32['camera.png'], 'camera.png: the same bytes become the same floats');
    assert.deepEqual(u8['basketball 1280×960 JPEG'], f32['basketball 1280×960 JPEG'], 'shrunk on both axes: the same bytes too');
    for (const name of Object.keys(photos)) {
      const [a, b] = [u8[name], f32[name]];
      assert.deepEqual(a.map((d) => d.label), b.map((d) => d.label), `${name}: the same labels, in order`);
      a.forEach((d, i) => {
        const e = b[i];
        assert.ok(Math.abs(d.confidence - e.confidence) <= 0.01, `${name} #${i}: confidence ${d.confidence} vs ${e.confidence}`);
        for (const k of ['x', 'y', 'width', 'height'] as const) {
          assert.ok(Math.abs(d.bounding_box[k] - e.bounding_box[k]) <= 1, `${name} #${i}: ${k} ${d.bounding_box[k]} vs ${e.bounding_box[k]}`);
        }
      });
    }
    assert.ok(u8['basketball1.png'].some((d) => d.label === 'person'), 'the player is found');
    assert.deepEqual(u8['squirrel_cls.jpg'], [], 'still nothing in the squirrel photo at the 0.3 threshold');
  });

  test('a request carries 512×512×3 bytes to the UINT8 model, four times that to the FP32 one', async () => {
    for (const via of ['embedded', 'v2']) {
      const [u8, f32] = [sizes[`${U8} ${via}`], sizes[`${F32} ${via}`]];
      assert.ok(u8.length >= 4 && f32.length >= 4, 'the tests above made the calls');
      assert.deepEqual(new Set(u8), new Set([PIXELS]), `${via}: UINT8 requests`);
      assert.deepEqual(new Set(f32), new Set([PIXELS * 4]), `${via}: FP32 requests`);
    }
  });
});
