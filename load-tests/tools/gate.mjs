// The smoke run's regression gate (scripts/load.sh runs it after a `smoke --start` run).
//
//   node load-tests/tools/gate.mjs <summary.json>                compare with the baseline
//   node load-tests/tools/gate.mjs --update <summary.json>...    rewrite the baseline
//   options: --baseline FILE (default load-tests/baseline/smoke.json), --note TEXT (update)
//
// Compare: prints ratio, baseline, measured, allowed and exits 1 when a ratio regressed
// beyond its margin or was not measured, 0 otherwise. Update: the median of each ratio over
// the given runs (k6 summary JSONs of smoke runs), the margins of the previous baseline kept.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, hostname, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildBaseline, compareRatios, formatComparison, measureRatios, RATIOS } from '../lib/ratios.js';

const args = process.argv.slice(2);
// fileURLToPath, not .pathname: a checkout under a path with spaces or % stays readable.
let baselinePath = fileURLToPath(new URL('../baseline/smoke.json', import.meta.url));
let update = false;
let note = '';
const files = [];
for (let i = 0; i < args.length; i += 1) {
  const a = args[i];
  if (a === '--update') update = true;
  else if (a === '--baseline') baselinePath = args[++i];
  else if (a === '--note') note = args[++i];
  else if (a.startsWith('--')) { console.error(`gate: unknown option ${a}`); process.exit(2); }
  else files.push(a);
}
if (files.length === 0 || (!update && files.length > 1)) {
  console.error('usage: gate.mjs <summary.json> | gate.mjs --update <summary.json>... [--baseline FILE] [--note TEXT]');
  process.exit(2);
}

const runs = files.map((f) => measureRatios(JSON.parse(readFileSync(f, 'utf8'))));
const previous = existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, 'utf8')) : undefined;

if (update) {
  const recorded = {
    at: new Date().toISOString(),
    host: hostname(),
    cpus: cpus().length,
    load_average_1m: Number(loadavg()[0].toFixed(2)),
    node: process.version,
    runs: runs.length,
    command: 'scripts/load.sh smoke --start',
    ...(note ? { note } : {}),
  };
  const baseline = buildBaseline(runs, previous, recorded);
  writeFileSync(baselinePath, `${JSON.stringify(baseline, null, 2)}\n`);
  console.log(`gate: wrote ${baselinePath} from ${runs.length} run(s)`);
  for (const r of RATIOS) {
    const e = baseline.ratios[r.name];
    console.log(`  ${r.name.padEnd(36)} ${e.value.toFixed(3).padStart(8)}  runs ${e.observed.min.toFixed(3)}–${e.observed.max.toFixed(3)}  margin ${e.margin}`);
  }
  process.exit(0);
}

if (!previous) {
  console.error(`gate: no baseline at ${baselinePath}; record one with scripts/load.sh smoke --start --update-baseline`);
  process.exit(1);
}
const result = compareRatios(runs[0], previous);
console.log(`\nregression gate (ratios to the bare model, baseline ${previous.recorded?.at ?? '?'} on ${previous.recorded?.host ?? '?'}):`);
console.log(formatComparison(result));
console.log(result.ok ? 'GATE: PASS' : 'GATE: FAIL (a ratio regressed beyond its margin or was not measured)');
process.exit(result.ok ? 0 : 1);
