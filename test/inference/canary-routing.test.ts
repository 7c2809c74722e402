/**
 * A canary end to end: the real API (real PostgreSQL) against our KServe v2 gRPC server
 * (`recog inference-server`) serving a stable model ("centernet", version 1) and a canary
 * ("centernet-canary", version 2: the same ONNX file under another name and version, with a
 * catalog whose first label differs). Each result names the side that answered.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { InferenceBackend } from '../../src/inference/backend.js';
import { OnnxRuntimeBackend } from '../../src/inference/onnxruntime-backend.js';
import { startV2Server } from '../../src/inference/v2-server/server.js';
import { buildTestApp, json, type TestApp, type TestKey } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { REPO_ROOT, readFixture } from '../helpers/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/services.js';

const STABLE = { name: 'centernet', version: '1' };
const CANARY = { name: 'centernet-canary', version: '2' };
const CANARY_ONLY_LABEL = 'canary-only-person';
const IMAGE = readFixture('camera.png').toString('base64');

type Server = Awaited<ReturnType<typeof startV2Server>>;
let dir: string;
let canaryCatalog: string;
let server: Server;

interface Result {
  status: string;
  response_code: number;
  request_id: string;
  model: { name: string; version: string } | null;
  error?: string;
}

/** The rule, computed here from the hex digest (the agreed interface, not the service's code): salted by the canary's name and version. */
const expectedSide = (id: string, weight: number) =>
  Number.parseInt(createHash('sha256').update(`${CANARY.name}:${CANARY.version}:${id}`).digest('hex').slice(0, 8), 16) % 100 < weight ? 'canary' : 'stable';

/** `held`: models whose inferences wait until `gate` resolves (a canary that does not answer in time). */
function serve(models: string[], held: { models: string[]; gate: Promise<void> } = { models: [], gate: Promise.resolve() }): Promise<Server> {
  return startV2Server({
    modelRepository: path.join(dir, 'repo'),
    host: '127.0.0.1',
    grpcPort: 0,
    httpPort: null,
    models,
    createBackend: (m) => {
      const real = new OnnxRuntimeBackend({ modelPath: m.modelPath, modelName: m.config.name, modelVersion: m.version, threads: 1 });
      if (!held.models.includes(m.config.name)) return real;
      const slow: InferenceBackend = {
        kind: real.kind,
        start: () => real.start(),
        metadata: () => real.metadata(),
        ready: () => real.ready(),
        infer: async (inputs, options) => {
          await held.gate;
          return real.infer(inputs, options);
        },
        close: () => real.close(),
      };
      return slow;
    },
  });
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'recog-canary-'));
  const real = path.join(REPO_ROOT, 'model-repository', 'centernet');
  const repo = path.join(dir, 'repo');
  await mkdir(path.join(repo, CANARY.name, CANARY.version), { recursive: true });
  await symlink(real, path.join(repo, STABLE.name));
  await symlink(path.join(real, '1', 'model.onnx'), path.join(repo, CANARY.name, CANARY.version, 'model.onnx'));
  const config = await readFile(path.join(real, 'config.pbtxt'), 'utf8');
  await writeFile(path.join(repo, CANARY.name, 'config.pbtxt'), config.replace(`name: "${STABLE.name}"`, `name: "${CANARY.name}"`));
  const catalog = JSON.parse(await readFile(path.join(real, 'catalog.json'), 'utf8'));
  catalog.model = CANARY;
  catalog.classes[0].label = CANARY_ONLY_LABEL;
  canaryCatalog = path.join(dir, 'canary-catalog.json');
  await writeFile(canaryCatalog, JSON.stringify(catalog));
  server = await serve([STABLE.name, CANARY.name]);
});

after(async () => {
  await server?.close({ graceMs: 0 });
  await rm(dir, { recursive: true, force: true });
});

function canaryEnv(weight: number, grpcAddress = server.grpcAddress): Record<string, string> {
  return {
    TRITON_URL: grpcAddress,
    TRITON_MODEL_NAME: STABLE.name,
    TRITON_MODEL_VERSION: STABLE.version,
    CANARY_WEIGHT: String(weight),
    CANARY_MODEL_NAME: CANARY.name,
    CANARY_MODEL_VERSION: CANARY.version,
    CANARY_MODEL_CATALOG: canaryCatalog,
  };
}

/** Ready, and with a canary configured, its side serving too (/readyz names it `canary`). */
async function ready(t: TestApp): Promise<void> {
  await eventually(
    async () => {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      const canary = json<{ checks: Record<string, string> }>(res).checks.canary;
      return res.statusCode === 200 && (canary === undefined || canary === 'ok');
    },
    { what: 'the API and its canary ready', timeoutMs: 60_000 },
  );
}

async function recognise(t: TestApp, key: TestKey, externalId: string, extra: object = {}): Promise<Result> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/cv/requests/sync',
    headers: { 'x-api-key': key.key },
    payload: { external_id: externalId, image_base64: IMAGE, ...extra },
  });
  assert.equal(res.statusCode, 200, res.body);
  return json<Result>(res);
}

/** Runs `each` over `items`, a few at a time (the server batches concurrent calls). */
async function inParallel<T, R>(items: T[], each: (item: T) => Promise<R>, width = 4): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await each(items[i]);
      }
    }),
  );
  return out;
}

async function metricsText(t: TestApp): Promise<string> {
  return (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
}

function counter(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

test('weight 0: every result names the stable model', async () => {
  const t = await buildTestApp(canaryEnv(0));
  try {
    await ready(t);
    const key = await t.newKey();
    const results = await inParallel(Array.from({ length: 10 }, (_, i) => `zero-${i}`), (id) => recognise(t, key, id));
    for (const r of results) {
      assert.equal(r.status, 'DONE');
      assert.deepEqual(r.model, STABLE);
    }
  } finally {
    await t.close();
  }
});

test('weight 100: every result names the canary; a class only the canary knows is a valid request class', async () => {
  const t = await buildTestApp(canaryEnv(100));
  try {
    await ready(t);
    const key = await t.newKey();
    const results = await inParallel(Array.from({ length: 10 }, (_, i) => `all-${i}`), (id) => recognise(t, key, id));
    for (const r of results) {
      assert.equal(r.status, 'DONE');
      assert.deepEqual(r.model, CANARY);
    }
    // Refused with 400 if the labels were the stable catalog's alone.
    const narrowed = await recognise(t, key, 'canary-class', { classes: [CANARY_ONLY_LABEL] });
    assert.equal(narrowed.status, 'DONE');

    const text = await metricsText(t);
    assert.equal(counter(text, 'model_recognitions_total', `model="${CANARY.name}",version="${CANARY.version}",outcome="DONE",attempt="first"`), 11);
    assert.equal(counter(text, 'model_recognitions_total', `model="${STABLE.name}",version="${STABLE.version}",outcome="DONE",attempt="first"`), 0);
    assert.match(text, new RegExp(`model_inference_duration_seconds_count\\{model="${CANARY.name}",version="${CANARY.version}"\\} 11`));

    // Feedback counts a new or changed rating; the same rating posted again (an upsert) does not.
    const rate = async (rating: number) => {
      const rated = await t.app.inject({ method: 'POST', url: '/v1/cv/feedback', headers: { 'x-api-key': key.key }, payload: { request_id: results[0].request_id, rating } });
      assert.equal(rated.statusCode, 200, rated.body);
      const after = await metricsText(t);
      return ['bad', 'good'].map((r) => counter(after, 'model_feedback_total', `model="${CANARY.name}",version="${CANARY.version}",rating="${r}"`));
    };
    assert.deepEqual(await rate(-1), [1, 0]);
    assert.deepEqual(await rate(-1), [1, 0], 'the same rating again is not counted');
    assert.deepEqual(await rate(1), [1, 1], 'a changed rating is');
    assert.deepEqual(await rate(1), [1, 1]);
  } finally {
    await t.close();
  }
});

test('weight 30: ~30% of external_ids go to the canary, each always to the same side; a replay keeps its answer after the weight changed', async () => {
  const database: TestDatabase = await createTestDatabase();
  try {
    const ids = Array.from({ length: 50 }, (_, i) => `split-${i}`);
    let first: TestKey;
    const t = await buildTestApp(canaryEnv(30), { shareDatabase: database });
    try {
      await ready(t);
      first = await t.newKey();
      const second = await t.newKey();
      const once = await inParallel(ids, (id) => recognise(t, first, id));
      // Another key: the same external_id is a new request, not a replay, and lands on the same side.
      const again = await inParallel(ids, (id) => recognise(t, second, id));
      let canaries = 0;
      ids.forEach((id, i) => {
        const want = expectedSide(id, 30) === 'canary' ? CANARY : STABLE;
        assert.equal(once[i].status, 'DONE', id);
        assert.deepEqual(once[i].model, want, id);
        assert.deepEqual(again[i].model, want, `${id} again`);
        assert.notEqual(again[i].request_id, once[i].request_id);
        if (want === CANARY) canaries++;
      });
      // Binomial(50, 0.3): mean 15, sd 3.2; 5..25 is about three sd either way.
      assert.ok(canaries >= 5 && canaries <= 25, `${canaries} of 50 on the canary`);
      assert.ok(canaries > 0 && canaries < 50, 'both sides answered');
    } finally {
      await t.close();
    }

    // The same database, the weight moved to 0: a replay is the stored result, canary's or not.
    const replayed = ids.find((id) => expectedSide(id, 30) === 'canary')!;
    const later = await buildTestApp(canaryEnv(0), { shareDatabase: database });
    try {
      await ready(later);
      const r = await recognise(later, first, replayed);
      assert.deepEqual(r.model, CANARY, 'the replay names the side that answered then');
      const fresh = await recognise(later, await later.newKey(), replayed);
      assert.deepEqual(fresh.model, STABLE, 'a new request with the same id now goes to stable');
    } finally {
      await later.close();
    }
  } finally {
    await database.drop();
  }
});

test('a canary missing on the server: the stable model answers every request, the canary counts its failures, the API stays ready', async () => {
  const stableOnly = await serve([STABLE.name]);
  const t = await buildTestApp(canaryEnv(50, stableOnly.grpcAddress));
  try {
    const key = await t.newKey();
    const ids = Array.from({ length: 12 }, (_, i) => `missing-${i}`);
    // The stable side starts in the background too: wait until it answers.
    const stableId = ids.find((id) => expectedSide(id, 50) === 'stable')!;
    await eventually(async () => (await recognise(t, await t.newKey(), stableId)).status === 'DONE', { what: 'the stable side serving', timeoutMs: 60_000 });
    const results = await inParallel(ids, (id) => recognise(t, key, id));
    const routedToCanary = ids.filter((id) => expectedSide(id, 50) === 'canary').length;
    ids.forEach((id, i) => {
      assert.equal(results[i].status, 'DONE', id);
      assert.deepEqual(results[i].model, STABLE, `${id}: answered by the stable model`);
    });
    assert.ok(routedToCanary > 0 && routedToCanary < ids.length, `${routedToCanary} of ${ids.length} routed to the canary`);
    // Readiness follows the stable side: a canary that cannot load keeps no pod out of rotation.
    const readyz = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(readyz.statusCode, 200);
    const body = json<{ checks: Record<string, string>; degraded: string[] }>(readyz);
    assert.match(body.checks.canary, /^canary centernet-canary version 2 not ready/);
    assert.deepEqual(body.degraded, ['canary']);
    // What a rollback decides on: each canary-routed request is a canary ERROR, and the
    // stable model's answers to them are fallbacks, apart from its own first attempts.
    const text = await metricsText(t);
    const stable = `model="${STABLE.name}",version="${STABLE.version}",outcome="DONE"`;
    assert.equal(counter(text, 'model_recognitions_total', `model="${CANARY.name}",version="${CANARY.version}",outcome="ERROR",attempt="first"`), routedToCanary);
    assert.equal(counter(text, 'model_recognitions_total', `${stable},attempt="fallback"`), routedToCanary);
    // The stable-routed ids, and the one answer the wait above ended on.
    assert.equal(counter(text, 'model_recognitions_total', `${stable},attempt="first"`), ids.length - routedToCanary + 1);
  } finally {
    await t.close();
    await stableOnly.close({ graceMs: 0 });
  }
});

test("a canary slower than its budget (the deadline minus CANARY_RESERVE_MS): a canary timeout, and the stable model answers in the time kept for it", async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slowCanary = await serve([STABLE.name, CANARY.name], { models: [CANARY.name], gate });
  // The canary may use 8 s - 5 s = 3 s; its inference waits for the gate, opened only after the answer.
  const t = await buildTestApp({ ...canaryEnv(100, slowCanary.grpcAddress), SYNC_TIMEOUT_MS: '8000', CANARY_RESERVE_MS: '5000' });
  try {
    await ready(t);
    const r = await recognise(t, await t.newKey(), 'slow-canary');
    assert.equal(r.status, 'DONE', r.error);
    assert.equal(r.response_code, 200);
    assert.deepEqual(r.model, STABLE, 'answered by the stable model');
    const text = await metricsText(t);
    assert.equal(counter(text, 'model_recognitions_total', `model="${CANARY.name}",version="${CANARY.version}",outcome="timeout",attempt="first"`), 1);
    assert.equal(counter(text, 'model_recognitions_total', `model="${STABLE.name}",version="${STABLE.version}",outcome="DONE",attempt="fallback"`), 1);
    assert.equal(counter(text, 'model_recognitions_total', `model="${STABLE.name}",version="${STABLE.version}",outcome="DONE",attempt="first"`), 0);
  } finally {
    release();
    await t.close();
    await slowCanary.close({ graceMs: 0 });
  }
});
