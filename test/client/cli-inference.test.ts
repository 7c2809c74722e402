/**
 * recog-client's inference commands as a user runs them: the built bin as a child process
 * against the real service, with its own $XDG_CONFIG_HOME.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import type { TestApp, TestKey } from '../helpers/app.js';
import { fixturePath } from '../helpers/fixtures.js';
import { startImageServer, type ImageServer } from '../helpers/image-server.js';
import { startCliHarness, type CliHarness } from './cli-harness.js';

let cli: CliHarness;
let t: TestApp;
let key: TestKey;
let images: ImageServer;
let home: string;
let run: CliHarness['run'];

before(async () => {
  cli = await startCliHarness();
  ({ t, home, run } = cli);
  key = await t.newKey();
  images = await startImageServer();
});
after(async () => {
  await images.close();
  await cli.close();
});

test('recognize a file: table by default, JSON on request, the re-run replays (no second charge)', async () => {
  const table = await run(['recognize', fixturePath('basketball1.png')], { RECOG_API_KEY: key.key });
  assert.equal(table.code, 0, table.stderr);
  const [header, ...rows] = table.stdout.trim().split('\n');
  assert.match(header, /^INPUT\s+REQUEST\s+STATUS\s+LABEL\s+CONF\s+BOX/);
  assert.ok(rows.some((r) => /\bDONE\b.*\bperson\b/.test(r)), table.stdout);
  assert.ok(!table.stdout.includes(key.key) && !table.stderr.includes(key.key), 'the key is never printed');

  const json = await run(['--json', 'recognize', fixturePath('basketball1.png')], { RECOG_API_KEY: key.key });
  assert.equal(json.code, 0, json.stderr);
  const [out] = JSON.parse(json.stdout) as Array<{ result: { replayed: boolean; requestId: string; externalId: string } }>;
  assert.equal(out.result.replayed, true, 'same bytes → same derived external id → replay');
  assert.match(out.result.externalId, /^file-sha256-[0-9a-f]{40}$/);
  const used = await t.db('key_usage').where({ key_id: key.id }).sum({ n: 'used' }).first();
  assert.equal(Number(used?.n), 1);

  const looked = await run(['request', out.result.requestId], { RECOG_API_KEY: key.key });
  assert.equal(looked.code, 0, looked.stderr);
  assert.match(looked.stdout, /DONE/);
  assert.match(looked.stdout, /person/);
  const rated = await run(['feedback', out.result.requestId, 'good'], { RECOG_API_KEY: key.key });
  assert.equal(rated.code, 0, rated.stderr);
  const fb = await t.db('feedback').where({ request_id: out.result.requestId }).first();
  assert.equal(fb?.rating, 1);
});

test('--annotate writes the image with boxes drawn', async () => {
  const out = path.join(home, 'camera.annotated.png');
  const r = await run(['--json', 'recognize', fixturePath('camera.png'), '--annotate', out, '--external-id', 'annotate-1'], { RECOG_API_KEY: key.key });
  assert.equal(r.code, 0, r.stderr);
  const [{ result }] = JSON.parse(r.stdout) as Array<{ result: { detections: Array<{ boundingBox: { x: number; y: number; width: number; height: number } }> } }>;
  const b = result.detections[0].boundingBox;
  const original = await sharp(fixturePath('camera.png')).raw().ensureAlpha().toBuffer({ resolveWithObject: true });
  const drawn = await sharp(out).raw().ensureAlpha().toBuffer({ resolveWithObject: true });
  assert.equal(drawn.info.width, original.info.width);
  assert.equal(drawn.info.height, original.info.height);
  // Along the box's left edge the pixels changed; far from every box they did not.
  const at = (img: typeof drawn, x: number, y: number) => [...img.data.subarray((y * img.info.width + x) * 4, (y * img.info.width + x) * 4 + 3)];
  let changed = 0;
  for (let y = b.y + 5; y < b.y + b.height - 5; y += 5) if (at(drawn, b.x, y).join() !== at(original, b.x, y).join()) changed++;
  assert.ok(changed > 5, `box edge drawn (${changed} samples changed)`);
});

test('batch of URLs and a progress-free table; failures give exit code 6', async () => {
  const r = await run(['batch', images.url('/images/camera.png'), images.url('/status/404')], { RECOG_API_KEY: key.key });
  assert.equal(r.code, 6, r.stderr);
  assert.match(r.stdout, /DONE.*person/);
  assert.match(r.stdout, /FAILED/);
});

test('API key resolution: --api-key over RECOG_API_KEY over the config file', async () => {
  const cfg = path.join(home, 'config', 'recog-client');
  await mkdir(cfg, { recursive: true });
  await writeFile(path.join(cfg, 'config.json'), JSON.stringify({ profiles: { default: { api_key: key.key }, other: { api_key: 'cvk_wrong' } } }), { mode: 0o600 });
  const img = fixturePath('squirrel_cls.jpg');
  assert.equal((await run(['recognize', img])).code, 0, 'from the config file');
  assert.equal((await run(['recognize', img], { RECOG_API_KEY: 'cvk_wrong' })).code, 3, 'env beats the file');
  assert.equal((await run(['--api-key', key.key, 'recognize', img], { RECOG_API_KEY: 'cvk_wrong' })).code, 0, 'flag beats env');
  assert.equal((await run(['--profile', 'other', 'recognize', img])).code, 3, 'profiles');

  await chmod(path.join(cfg, 'config.json'), 0o644);
  const warned = await run(['recognize', img]);
  assert.match(warned.stderr, /readable by other users/);
  await chmod(path.join(cfg, 'config.json'), 0o600);

  const set = await run(['config', 'set', 'api_key', '-', '--profile', 'piped'], {}, `${key.key}\n`);
  assert.equal(set.code, 0, set.stderr);
  const stored = JSON.parse(await readFile(path.join(cfg, 'config.json'), 'utf8')) as { profiles: Record<string, { api_key: string }> };
  assert.equal(stored.profiles.piped.api_key, key.key);
  const list = await run(['config', 'list']);
  assert.ok(!list.stdout.includes(key.key), 'config list masks keys');
});

test('exit codes by class: usage 2, auth 3, limits 4, server 5, bad input 1', async () => {
  assert.equal((await run(['recognize'])).code, 2);
  assert.equal((await run(['feedback', '3b52482a-6374-42ae-bbb7-f3d901ac7aa9', 'great'], { RECOG_API_KEY: key.key })).code, 2);
  assert.equal((await run(['--profile', 'nokey', 'recognize', fixturePath('camera.png')], { RECOG_API_KEY: '' })).code, 2, 'no key at all is a usage error');
  const noKey = await run(['recognize', fixturePath('camera.png')], { RECOG_API_KEY: 'cvk_invalid' });
  assert.equal(noKey.code, 3);
  assert.match(noKey.stderr, /INVALID_API_KEY/);
  const limited = await t.newKey({ quota: 0 });
  assert.equal((await run(['recognize', fixturePath('camera.png')], { RECOG_API_KEY: limited.key })).code, 4);
  const notImage = path.join(home, 'notes.txt');
  await writeFile(notImage, 'not an image');
  const bad = await run(['recognize', notImage], { RECOG_API_KEY: key.key });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /UNSUPPORTED_IMAGE_FORMAT/);
  const down = await run(['--base-url', 'http://127.0.0.1:9', '--timeout', '2', 'request', '3b52482a-6374-42ae-bbb7-f3d901ac7aa9'], { RECOG_API_KEY: key.key });
  assert.equal(down.code, 5, down.stderr);
});

test('--help on every command and a completion script built from the commands', async () => {
  for (const cmd of [[], ['recognize'], ['batch'], ['keys', 'create'], ['keys', 'revoke'], ['login'], ['usage'], ['config', 'set']]) {
    const r = await run([...cmd, '--help']);
    assert.equal(r.code, 0, cmd.join(' '));
    assert.match(r.stdout, /^Usage: recog-client/);
  }
  const c = await run(['completion', 'bash']);
  assert.match(c.stdout, /complete -F _recog_client recog-client/);
  assert.match(c.stdout, /recognize/);
  assert.match(c.stdout, /keys\) opts="list create update suspend resume revoke/);
});

test('--max-results, --min-confidence and --classes reach the service; a bad value is a usage error', async () => {
  const env = { RECOG_API_KEY: (await t.newKey({ classes: ['person', 'zebra'] })).key };
  const img = fixturePath('basketball1.png');
  const detections = async (args: string[]) => {
    const r = await run(['--json', 'recognize', img, ...args], env);
    assert.equal(r.code, 0, r.stderr);
    const [{ result }] = JSON.parse(r.stdout) as Array<{ result: { replayed: boolean; detections: Array<{ label: string; confidence: number }> } }>;
    return result;
  };
  const all = await detections([]);
  assert.ok(all.detections.length >= 2, JSON.stringify(all.detections));
  const one = await detections(['--max-results', '1']);
  assert.equal(one.replayed, false, 'other flags, another derived external id: a new request');
  assert.equal(one.detections.length, 1);
  assert.equal((await detections(['--max-results', '1'])).replayed, true, 'the same flags again replay');
  assert.deepEqual((await detections(['--classes', 'zebra'])).detections, []);
  const [top, second] = [...new Set(all.detections.map((d) => d.confidence))].sort((a, b) => b - a);
  const threshold = (top + second) / 2;
  const sure = await detections(['--min-confidence', String(threshold), '--classes', 'person,zebra']);
  assert.ok(sure.detections.length >= 1 && sure.detections.length < all.detections.length, JSON.stringify(sure.detections));
  assert.ok(sure.detections.every((d) => d.confidence >= threshold));
  assert.equal(one.detections[0].confidence, top, 'the most confident one');

  const batch = await run(['--json', 'batch', images.url('/images/basketball1.png'), images.url('/images/camera.png'), '--max-results', '1'], env);
  assert.equal(batch.code, 0, batch.stderr);
  const b = JSON.parse(batch.stdout) as { results: Array<{ detections: unknown[] }> };
  assert.deepEqual(b.results.map((r) => r.detections.length), [1, 1]);

  for (const args of [['--max-results', 'ten'], ['--max-results', '1.5'], ['--min-confidence', 'high'], ['--min-confidence', '']]) {
    for (const cmd of [['recognize', img], ['batch', images.url('/images/camera.png')]]) {
      const r = await run([...cmd, ...args], env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^recog-client: ${args[0]} takes a .*\\n$`));
    }
  }
  const refused = await run(['recognize', img, '--max-results', '0'], env);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /400 INVALID_PARAMETERS: /);
  const unseen = await run(['batch', images.url('/images/camera.png'), '--classes', 'dog'], env);
  assert.equal(unseen.code, 1, unseen.stderr);
  assert.match(unseen.stderr, /^recog-client: 400 INVALID_PARAMETERS: .*dog.*\n$/);

  for (const cmd of ['recognize', 'batch']) {
    const help = await run([cmd, '--help']);
    for (const flag of ['--min-confidence <n>', '--max-results <n>', '--classes <list>']) assert.ok(help.stdout.includes(flag), `${cmd} --help: ${flag}`);
  }
});
