// The load runs' regression gate (scripts/load.sh runs it after `smoke --start` and
// `grpc --start`).
//
//   node load-tests/tools/gate.mjs [--scenario S] <summary.json>              compare with the baseline
//   node load-tests/tools/gate.mjs [--scenario S] --update <summary.json>...  rewrite the baseline
//   options: --scenario smoke|grpc (default smoke: which ratios, and the default baseline
//            load-tests/baseline/<scenario>.json), --baseline FILE, --note TEXT (update)
//
// Compare: prints ratio, baseline, measured, allowed and exits 1 when a ratio regressed
// beyond its margin or was not measured, 0 otherwise. Update: the median of each ratio over
// the given runs (k6 summary JSONs of that scenario's runs), the margins of the previous
// baseline kept.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, hostname, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildBaseline, compareRatios, formatComparison, measureRatios, RATIO_SETS } from '../lib/ratios.js';

/** What each scenario's ratios are relative to, and the command whose runs the baseline holds. */
const SCENARIOS = {
  smoke: { against: 'ratios to the bare model', command: () => 'scripts/load.sh smoke --start' },
  grpc: {
    against: 'ratios of the API to the inference layer',
    // The phase settings move the ratios (p95 over fewer calls, batching at other concurrency),
    // so the baseline records those it was measured with; the npm script load:grpc-gate pins them.
    command: () => `VUS=${process.env.VUS || 2} PHASE_DURATION=${process.env.PHASE_DURATION || '30s'}`
      + ` WARMUP_DURATION=${process.env.WARMUP_DURATION || '20s'} scripts/load.sh grpc --start`,
  },
};

const args = process.argv.slice(2);
let scenario = 'smoke';
let baselinePath;
let update = false;
let note = '';
const files = [];
for (let i = 0; i < args.length; i += 1) {
  const a = args[i];
  if (a === '--update') update = true;
  else if (a === '--scenario') scenario = args[++i];
  else if (a === '--baseline') baselinePath = args[++i];
  else if (a === '--note') note = args[++i];
  else if (a.startsWith('--')) { console.error(`gate: unknown option ${a}`); process.exit(2); }
  else files.push(a);
}
if (!Object.hasOwn(SCENARIOS, scenario)) {
  console.error(`gate: no ratios for scenario '${scenario}' (one of: ${Object.keys(SCENARIOS).join(', ')})`);
  process.exit(2);
}
if (files.length === 0 || (!update && files.length > 1)) {
  console.error('usage: gate.mjs [--scenario smoke|grpc] <summary.json> | gate.mjs [--scenario smoke|grpc] --update <summary.json>... [--baseline FILE] [--note TEXT]');
  process.exit(2);
}
const defs = RATIO_SETS[scenario];
// fileURLToPath, not .pathname: a checkout under a path with spaces or % stays readable.
baselinePath ??= fileURLToPath(new URL(`../baseline/${scenario}.json`, import.meta.url));

const runs = files.map((f) => measureRatios(JSON.parse(readFileSync(f, 'utf8')), defs));
const previous = existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, 'utf8')) : undefined;

if (update) {
  const recorded = {
    at: new Date().toISOString(),
    host: hostname(),
    cpus: cpus().length,
    load_average_1m: Number(loadavg()[0].toFixed(2)),
    node: process.version,
    runs: runs.length,
    command: SCENARIOS[scenario].command(),
    ...(note ? { note } : {}),
  };
  const baseline = buildBaseline(runs, previous, recorded, 1.0, defs);
  writeFileSync(baselinePath, `${JSON.stringify(baseline, null, 2)}\n`);
  console.log(`gate: wrote ${baselinePath} from ${runs.length} run(s)`);
  for (const r of defs) {
    const e = baseline.ratios[r.name];
    console.log(`  ${r.name.padEnd(36)} ${e.value.toFixed(3).padStart(8)}  runs ${e.observed.min.toFixed(3)}–${e.observed.max.toFixed(3)}  margin ${e.margin}`);
  }
  process.exit(0);
}

if (!previous) {
  console.error(`gate: no baseline at ${baselinePath}; record one with scripts/load.sh ${scenario} --start --update-baseline`);
  process.exit(1);
}
const result = compareRatios(runs[0], previous);
console.log(`\nregression gate (${scenario}: ${SCENARIOS[scenario].against}, baseline ${previous.recorded?.at ?? '?'} on ${previous.recorded?.host ?? '?'}):`);
console.log(formatComparison(result));
console.log(result.ok ? 'GATE: PASS' : 'GATE: FAIL (a ratio regressed beyond its margin or was not measured)');
process.exit(result.ok ? 0 : 1);
