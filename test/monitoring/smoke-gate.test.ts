/**
 * The load runs' regression gates (smoke, and grpc: the API next to ModelInfer alone) without
 * k6: load-tests/lib/ratios.js computes ratios from
 * a k6 summary and judges them against a baseline; load-tests/tools/gate.mjs is the command
 * scripts/load.sh runs (its exit code is the verdict). The summaries here are built by hand
 * in the shape k6's handleSummary gives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/fixtures.js';
import {
  allowedValue,
  buildBaseline,
  compareRatios,
  formatComparison,
  GRPC_RATIOS,
  grpcRatioReport,
  measureRatios,
  MODEL_METRIC,
  PHASE_CALLS_METRIC,
  PHASE_METRIC,
  RATIOS,
  serverView,
  V2_FIELDS,
  type Baseline,
  type KSummary,
} from '../../load-tests/lib/ratios.js';

/** A smoke summary where the model takes `model` ms and the API's timings scale with `api`. */
function summary({ model = 40, api = 1, calls = 20 }: { model?: number; api?: number; calls?: number } = {}): KSummary {
  return {
    metrics: {
      'http_req_duration{endpoint:timed_sync}': { values: { med: 60 * api, 'p(95)': 80 * api, avg: 62 * api } },
      'processing_time_ms{endpoint:timed_sync}': { values: { med: 55 * api } },
      'outside_processing_ms{endpoint:timed_sync}': { values: { med: 5 * api } },
      'http_req_duration{endpoint:timed_lookup}': { values: { med: 2 * api } },
      [MODEL_METRIC]: { values: { avg: model, count: 1 } },
      [PHASE_METRIC]: { values: { avg: calls * 64 * api, count: 1 } },
      [PHASE_CALLS_METRIC]: { values: { count: calls, rate: 1 } },
    },
  };
}

const recorded = { at: '2026-11-26T05:00:00Z', host: 'test' };

function near(actual: number | undefined, expected: number) {
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);
}

/** Cumulative ModelStatistics as grpc.js's snapshots record them (gauge v2_stat{snap,field}). */
function snapshot(snap: string, counts: Record<string, number>): KSummary['metrics'] {
  return Object.fromEntries(V2_FIELDS.map((field) => [`v2_stat{snap:${snap},field:${field}}`, { values: { value: counts[field] ?? 0 } }]));
}

/**
 * A grpc summary: ModelInfer takes `infer` ms at the client, the v2 server `server` ms per
 * request; the API's latency scales with `api`, and what it asks of the server with `ask`.
 */
function grpcSummary({ infer = 100, server = 80, api = 1, ask = 1, calls = 200 }: { infer?: number; server?: number; api?: number; ask?: number; calls?: number } = {}): KSummary {
  const apiCalls = Math.round(calls / (1.5 * api));
  const ms = 1e6;
  // Phase 1: `calls` requests of `server` ms in batches of 1; phase 2: apiCalls of server × ask ms in pairs.
  const grpc = { inferences: calls, executions: calls, success_count: calls, success_ns: calls * server * ms, queue_count: calls, queue_ns: calls * 2 * ms, compute_count: calls, compute_ns: calls * (server - 2) * ms };
  const after = { ...grpc };
  after.inferences += apiCalls; after.executions += apiCalls / 2; after.success_count += apiCalls; after.success_ns += apiCalls * server * ask * ms;
  after.queue_count += apiCalls; after.compute_count += apiCalls;
  return {
    metrics: {
      'grpc_req_duration{endpoint:model_infer}': { values: { count: calls, med: infer, 'p(95)': infer * 1.4, avg: infer * 1.1 } },
      'http_req_duration{endpoint:sync_base64}': { values: { count: apiCalls, med: infer * 1.5 * api, 'p(95)': infer * 2.4 * api, avg: infer * 1.6 * api } },
      ...snapshot('start', {}),
      ...snapshot('grpc', grpc),
      ...snapshot('api', after),
    },
  };
}

describe('smoke regression gate: ratios', () => {
  it('measures every ratio relative to the model in the same run', () => {
    const r = measureRatios(summary());
    assert.equal(r.sync_p50_over_model, 60 / 40);
    assert.equal(r.sync_p95_over_model, 80 / 40);
    assert.equal(r.processing_p50_over_model, 55 / 40);
    assert.equal(r.outside_processing_p50_over_model, 5 / 40);
    assert.equal(r.lookup_p50_over_model, 2 / 40);
    // 20 calls in 1280 ms = 15.6/s against 25 inferences/s.
    assert.ok(Math.abs(r.sync_throughput_over_model! - (20 / 1280) * 40) < 1e-12);
    // A machine twice as slow everywhere gives the same ratios: what the gate relies on.
    const slow = measureRatios(summary({ model: 80, api: 2 }));
    for (const def of RATIOS) assert.ok(Math.abs(slow[def.name]! - r[def.name]!) < 1e-12, def.name);
  });

  it('leaves a ratio unmeasured when the model time is missing, and the gate fails on it', () => {
    const s = summary();
    delete s.metrics[MODEL_METRIC];
    const r = measureRatios(s);
    for (const def of RATIOS) assert.equal(r[def.name], undefined, def.name);
    const baseline = buildBaseline([measureRatios(summary())], undefined, recorded, 0.5);
    const result = compareRatios(r, baseline);
    assert.equal(result.ok, false);
    assert.ok(result.rows.every((row) => row.status === 'NOT MEASURED'));
  });

  it('passes within the margin and fails beyond it, in the direction that is worse', () => {
    const baseline: Baseline = {
      ratios: {
        sync_p50_over_model: { value: 1.5, better: 'lower', margin: 0.5 },
        sync_throughput_over_model: { value: 0.6, better: 'higher', margin: 0.5 },
      },
    };
    assert.equal(allowedValue(baseline.ratios.sync_p50_over_model), 2.25);
    assert.ok(Math.abs(allowedValue(baseline.ratios.sync_throughput_over_model) - 0.4) < 1e-12);
    // Better than the baseline in both directions: fine.
    assert.equal(compareRatios({ sync_p50_over_model: 1.1, sync_throughput_over_model: 0.9 }, baseline).ok, true);
    // At the edge: still fine.
    assert.equal(compareRatios({ sync_p50_over_model: 2.25, sync_throughput_over_model: 0.4 }, baseline).ok, true);
    const slower = compareRatios({ sync_p50_over_model: 2.3, sync_throughput_over_model: 0.6 }, baseline);
    assert.equal(slower.ok, false);
    assert.deepEqual(slower.rows.map((row) => row.status), ['REGRESSED', 'ok']);
    const fewer = compareRatios({ sync_p50_over_model: 1.5, sync_throughput_over_model: 0.39 }, baseline);
    assert.deepEqual(fewer.rows.map((row) => row.status), ['ok', 'REGRESSED']);
    // A ratio the baseline does not know is shown, not judged.
    const extra = compareRatios({ sync_p50_over_model: 1.5, sync_throughput_over_model: 0.6, new_ratio: 9 }, baseline);
    assert.equal(extra.ok, true);
    assert.equal(extra.rows[2].status, 'no baseline');
    const table = formatComparison(slower);
    assert.match(table, /^ratio\s+baseline\s+measured\s+allowed\s+status$/m);
    assert.match(table, /sync_p50_over_model\s+1\.500\s+2\.300\s+<= 2\.250\s+REGRESSED/);
    assert.match(table, /sync_throughput_over_model\s+0\.600\s+0\.600\s+>= 0\.400\s+ok/);
  });

  it('builds a baseline from the median of runs and keeps the previous margins', () => {
    const runs = [summary({ api: 1 }), summary({ api: 1.2 }), summary({ api: 0.9 })].map(measureRatios);
    const previous: Baseline = { about: 'kept', ratios: { sync_p50_over_model: { value: 9, better: 'lower', margin: 0.75 } } };
    const b = buildBaseline(runs, previous, recorded, 1);
    assert.equal(b.about, 'kept');
    assert.deepEqual(b.recorded, recorded);
    assert.equal(b.ratios.sync_p50_over_model.value, 1.5);
    assert.equal(b.ratios.sync_p50_over_model.margin, 0.75);
    assert.deepEqual(b.ratios.sync_p50_over_model.observed, { runs: 3, min: 1.35, max: 1.8 });
    assert.equal(b.ratios.lookup_p50_over_model.margin, 1);
    assert.deepEqual(Object.keys(b.ratios), RATIOS.map((r) => r.name));
  });
});

describe('grpc regression gate: ratios of the API to the inference layer', () => {
  it('reads the v2 server\'s own view between two snapshots', () => {
    const m = grpcSummary().metrics;
    const alone = serverView(m, 'start', 'grpc')!;
    assert.equal(alone.n, 200);
    near(alone.request, 80);
    near(alone.queue, 2);
    near(alone.batch, 1);
    const api = serverView(m, 'grpc', 'api')!;
    assert.equal(api.n, 133);
    near(api.batch, 2);
    // A missing snapshot, or nothing served in between: no view rather than a made-up one.
    assert.equal(serverView(m, 'api', 'missing'), undefined);
    assert.equal(serverView(m, 'api', 'api'), undefined);
  });

  it('measures the API against ModelInfer in the same run', () => {
    const r = measureRatios(grpcSummary(), GRPC_RATIOS);
    near(r.api_throughput_over_infer, 133 / 200);
    near(r.api_p50_over_infer_p50, 1.5);
    near(r.api_p95_over_infer_p95, 2.4 / 1.4);
    near(r.api_mean_over_v2_request, 160 / 80);
    near(r.v2_request_api_over_grpc_phase, 1);
    // Everything twice as slow (client and server): the same ratios.
    const slow = measureRatios(grpcSummary({ infer: 200, server: 160 }), GRPC_RATIOS);
    for (const def of GRPC_RATIOS) assert.ok(Math.abs(slow[def.name]! - r[def.name]!) < 1e-12, def.name);
    // The API asking three times as much of the server per call shows in the last ratio.
    near(measureRatios(grpcSummary({ ask: 3 }), GRPC_RATIOS).v2_request_api_over_grpc_phase, 3);
    // The smoke's ratios are not measured from a grpc run, and the other way round.
    for (const def of RATIOS) assert.equal(measureRatios(grpcSummary())[def.name], undefined, def.name);
    for (const def of GRPC_RATIOS) assert.equal(measureRatios(summary(), GRPC_RATIOS)[def.name], undefined, def.name);
    assert.match(grpcRatioReport(grpcSummary()).join('\n'), /api_p50_over_infer_p50\s+1\.500/);
  });

  it('leaves the API ratios unmeasured without an API phase, so the gate fails', () => {
    const s = grpcSummary();
    delete s.metrics['http_req_duration{endpoint:sync_base64}'];
    for (const f of V2_FIELDS) delete s.metrics[`v2_stat{snap:api,field:${f}}`];
    const r = measureRatios(s, GRPC_RATIOS);
    for (const def of GRPC_RATIOS) assert.equal(r[def.name], undefined, def.name);
    const baseline = buildBaseline([measureRatios(grpcSummary(), GRPC_RATIOS)], undefined, recorded, 1, GRPC_RATIOS);
    assert.deepEqual(Object.keys(baseline.ratios), GRPC_RATIOS.map((d) => d.name));
    assert.equal(compareRatios(r, baseline).ok, false);
  });
});

describe('smoke regression gate: load-tests/tools/gate.mjs', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'recog-gate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const gate = (...args: string[]) =>
    spawnSync(process.execPath, [path.join(REPO_ROOT, 'load-tests', 'tools', 'gate.mjs'), ...args], { encoding: 'utf8' });
  const write = (name: string, value: unknown) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it('records a baseline, passes a like run and fails a regressed one with the table', () => {
    const baselineFile = path.join(dir, 'smoke.json');
    const runs = [write('a.json', summary()), write('b.json', summary({ api: 1.1 }))];
    const up = gate('--update', ...runs, '--baseline', baselineFile);
    assert.equal(up.status, 0, up.stderr);
    const stored = JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline;
    assert.equal(stored.recorded!.runs, 2);
    assert.equal(stored.ratios.sync_p50_over_model.margin, 1.0);

    // The same speed on a machine three times slower: same ratios, pass.
    const same = gate(write('same.json', summary({ model: 120, api: 3 })), '--baseline', baselineFile);
    assert.equal(same.status, 0, same.stdout + same.stderr);
    assert.match(same.stdout, /GATE: PASS/);

    // The API 2.5 times slower around an unchanged model: beyond a margin of 1.0 (2×).
    const slow = gate(write('slow.json', summary({ api: 2.5 })), '--baseline', baselineFile);
    assert.equal(slow.status, 1, slow.stdout + slow.stderr);
    assert.match(slow.stdout, /sync_p50_over_model\s+1\.575\s+3\.750\s+<= 3\.150\s+REGRESSED/);
    assert.match(slow.stdout, /GATE: FAIL/);

    const none = gate(write('none.json', summary()), '--baseline', path.join(dir, 'missing.json'));
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no baseline/);
  });

  it('grpc: --scenario grpc records and judges the grpc ratios', () => {
    const baselineFile = path.join(dir, 'grpc.json');
    const up = gate('--scenario', 'grpc', '--update', write('g1.json', grpcSummary()), write('g2.json', grpcSummary({ api: 1.1 })), '--baseline', baselineFile);
    assert.equal(up.status, 0, up.stderr);
    const stored = JSON.parse(readFileSync(baselineFile, 'utf8')) as Baseline;
    assert.deepEqual(Object.keys(stored.ratios), GRPC_RATIOS.map((d) => d.name));
    assert.match(String(stored.recorded!.command), /scripts\/load\.sh grpc --start/);

    const same = gate('--scenario', 'grpc', write('g-same.json', grpcSummary({ infer: 300, server: 240 })), '--baseline', baselineFile);
    assert.equal(same.status, 0, same.stdout + same.stderr);
    assert.match(same.stdout, /grpc: ratios of the API to the inference layer/);
    // The API three times slower around an unchanged inference layer: beyond a margin of 1.
    const slow = gate('--scenario', 'grpc', write('g-slow.json', grpcSummary({ api: 3 })), '--baseline', baselineFile);
    assert.equal(slow.status, 1, slow.stdout + slow.stderr);
    assert.match(slow.stdout, /api_p50_over_infer_p50\s+\S+\s+4\.500\s+<= \S+\s+REGRESSED/);
    assert.match(slow.stdout, /api_throughput_over_infer\s+\S+\s+0\.220\s+>= \S+\s+REGRESSED/);
    // A smoke summary judged as grpc measures nothing: fail, not a silent pass.
    const wrong = gate('--scenario', 'grpc', write('g-wrong.json', summary()), '--baseline', baselineFile);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stdout, /NOT MEASURED/);
    assert.equal(gate('--scenario', 'nope', write('g-nope.json', summary())).status, 2);
  });

  for (const [scenario, defs] of [['smoke', RATIOS], ['grpc', GRPC_RATIOS]] as const) {
    it(`the committed ${scenario} baseline names every ratio with a margin and how it was recorded`, () => {
      const committed = JSON.parse(readFileSync(path.join(REPO_ROOT, 'load-tests', 'baseline', `${scenario}.json`), 'utf8')) as Baseline;
      assert.deepEqual(Object.keys(committed.ratios).sort(), defs.map((r) => r.name).sort());
      for (const [name, e] of Object.entries(committed.ratios)) {
        assert.ok(e.value > 0 && e.margin > 0, name);
        assert.equal(e.better, defs.find((r) => r.name === name)!.better, name);
        // The margin must clear the spread that was observed when it was set.
        assert.ok(e.observed, name);
        if (e.better === 'lower') assert.ok(e.observed.max <= allowedValue(e), name);
        else assert.ok(e.observed.min >= allowedValue(e), name);
      }
      assert.ok(typeof committed.recorded?.at === 'string' && typeof committed.recorded?.host === 'string');
    });
  }
});
