/**
 * The smoke run's regression gate without k6: load-tests/lib/ratios.js computes ratios from
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
  measureRatios,
  MODEL_METRIC,
  PHASE_CALLS_METRIC,
  PHASE_METRIC,
  RATIOS,
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

  it('the committed baseline names every ratio with a margin and how it was recorded', () => {
    const committed = JSON.parse(readFileSync(path.join(REPO_ROOT, 'load-tests', 'baseline', 'smoke.json'), 'utf8')) as Baseline;
    assert.deepEqual(Object.keys(committed.ratios).sort(), RATIOS.map((r) => r.name).sort());
    for (const [name, e] of Object.entries(committed.ratios)) {
      assert.ok(e.value > 0 && e.margin > 0, name);
      assert.equal(e.better, RATIOS.find((r) => r.name === name)!.better, name);
      // The margin must clear the spread that was observed when it was set.
      assert.ok(e.observed, name);
      if (e.better === 'lower') assert.ok(e.observed.max <= allowedValue(e), name);
      else assert.ok(e.observed.min >= allowedValue(e), name);
    }
    assert.ok(typeof committed.recorded?.at === 'string' && typeof committed.recorded?.host === 'string');
  });
});
