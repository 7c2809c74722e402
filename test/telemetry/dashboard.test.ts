/** The Grafana dashboard agrees with the metrics module: every series it queries exists. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Metrics } from '../../src/telemetry/metrics.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr: string }>;
}

const dashboard = JSON.parse(readFileSync(path.join(REPO_ROOT, 'charts/recognition-operator/files/monitoring/dashboards/api.json'), 'utf8')) as { uid: string; panels: Panel[] };

test('every series the dashboard queries is one the service exports', async () => {
  const m = new Metrics();
  m.watchPool(() => ({ used: 0, free: 0, pending: 0 }));
  const exported = new Set((await m.registry.getMetricsAsJSON()).map((x) => x.name));
  const queried = new Set<string>();
  for (const p of dashboard.panels) {
    for (const t of p.targets ?? []) {
      // metric selectors: a name directly followed by `{`
      for (const match of t.expr.matchAll(/([a-z_:][a-z0-9_:]*)\{/g)) queried.add(match[1]);
    }
  }
  assert.ok(queried.size >= 12, `the dashboard queries ${queried.size} series`);
  for (const name of queried) {
    const base = name.replace(/_(bucket|count|sum)$/, '');
    assert.ok(exported.has(name) || exported.has(base), `${name} is exported by src/telemetry/metrics.ts`);
  }
  for (const needed of ['http_request_duration_seconds', 'rejections_total', 'inference_duration_seconds', 'http_requests_in_flight', 'recognitions_total']) {
    assert.ok([...queried].some((q) => q.startsWith(needed)), `a panel shows ${needed}`);
  }
});

test('panels have unique ids and do not overlap', () => {
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  const cells = new Set<string>();
  for (const p of dashboard.panels) {
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
        const cell = `${x},${y}`;
        assert.ok(!cells.has(cell), `${p.title} overlaps another panel at ${cell}`);
        cells.add(cell);
      }
    }
    assert.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title} fits the 24-column grid`);
  }
});
