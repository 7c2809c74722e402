/** `recog detect` (src/cli/commands/detect.ts): in-process for the logic, one real process for the wiring. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { formatJson, formatTable, runDetect } from '../../src/cli/commands/detect.js';
import { createImageFetcher } from '../../src/images/fetch.js';
import { fixturePath, readFixture, REPO_ROOT } from '../helpers/fixtures.js';
import { testConfig } from './model.js';

const run = promisify(execFile);

describe('recog detect', () => {
  let server: http.Server;
  let base: string;

  before(async () => {
    // A real HTTP server on loopback serving the fixture.
    server = http.createServer((req, res) => {
      if (req.url === '/camera.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(readFixture('camera.png'));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('detects a person in a file; the JSON has results as API detections, the table a row per detection', async () => {
    const report = await runDetect(fixturePath('basketball1.png'), testConfig({ INFERENCE_THREADS: '2' }));
    const json = JSON.parse(formatJson(report));
    assert.ok(json.results.length > 0);
    const person = json.results.find((r: { label: string }) => r.label === 'person');
    assert.deepEqual(Object.keys(person).sort(), ['bounding_box', 'confidence', 'external_id', 'label']);
    assert.deepEqual(Object.keys(person.bounding_box).sort(), ['height', 'width', 'x', 'y']);
    assert.deepEqual(json.image, { width: 640, height: 480 });
    assert.deepEqual(json.model, { name: 'centernet', version: '1' });
    const table = formatTable(report).split('\n');
    assert.match(table[1], /^LABEL\s+EXTERNAL_ID\s+CONFIDENCE\s+X\s+Y\s+WIDTH\s+HEIGHT$/);
    assert.equal(table.length, 2 + json.results.length);
    assert.match(table[2], /^person\s+coco:1\s+0\.\d{3}\s+\d+/);
  });

  test('--threshold changes what is reported', async () => {
    const config = testConfig({ INFERENCE_THREADS: '2' });
    const strict = await runDetect(fixturePath('camera.png'), config, { threshold: 0.99 });
    assert.deepEqual(strict.outcome.detections, []);
    assert.match(formatTable(strict), /no detections at or above 0\.99/);
    const loose = await runDetect(fixturePath('camera.png'), config, { threshold: 0.1 });
    assert.ok(loose.outcome.detections.length > 1);
    assert.ok(loose.outcome.detections.every((d) => d.confidence >= 0.1));
  });

  test('reads a URL through the SSRF-safe fetcher (loopback allowed explicitly here)', async () => {
    const config = testConfig({ INFERENCE_THREADS: '2', IMAGE_FETCH_ALLOW_CIDRS: '127.0.0.0/8' });
    const fetcher = createImageFetcher({ allowCidrs: ['127.0.0.0/8'], timeoutMs: 5000, maxBytes: 10_000_000, maxRedirects: 3 });
    const report = await runDetect(`${base}/camera.png`, config, { fetcher });
    assert.ok(report.outcome.detections.some((d) => d.label === 'person'));
  });

  test('by default a loopback URL is refused before any model is loaded', async () => {
    await assert.rejects(runDetect(`${base}/camera.png`, testConfig()), (err: Error & { code?: string }) => err.code === 'INVALID_IMAGE_URL');
  });

  test('a missing file and a non-image are clear errors', async () => {
    await assert.rejects(runDetect('/nonexistent/photo.jpg', testConfig()), /cannot open \/nonexistent\/photo\.jpg: ENOENT/);
    await assert.rejects(runDetect(`${REPO_ROOT}/package.json`, testConfig()), (err: Error & { code?: string }) => err.code === 'UNSUPPORTED_IMAGE_FORMAT');
  });

  test('as a process: --json on stdout with exit 0; an error on stderr with exit 1', async () => {
    const env = { ...process.env, MODEL_REPOSITORY: `${REPO_ROOT}/model-repository`, INFERENCE_THREADS: '2' };
    const ok = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'detect', fixturePath('camera.png'), '--json'], { cwd: REPO_ROOT, env });
    const json = JSON.parse(ok.stdout);
    assert.ok(json.results.some((r: { label: string }) => r.label === 'person'));
    await assert.rejects(
      run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'detect', `${REPO_ROOT}/package.json`], { cwd: REPO_ROOT, env }),
      (err: { code: number; stdout: string; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.equal(err.stdout, '');
        assert.match(err.stderr, /unsupported image format.*\(UNSUPPORTED_IMAGE_FORMAT\)/);
        return true;
      },
    );
  });
});
