// Types of ratios.js for the TypeScript tests (the module itself stays plain JavaScript so
// that k6 loads it as it is).
export type Better = 'lower' | 'higher';

export interface KSummary {
  metrics: Record<string, { values: Record<string, number> }>;
}

export interface BaselineEntry {
  value: number;
  better: Better;
  margin: number;
  what?: string;
  observed?: { runs: number; min: number; max: number };
}

export interface Baseline {
  about?: string;
  recorded?: Record<string, unknown>;
  ratios: Record<string, BaselineEntry>;
}

export interface ComparisonRow {
  name: string;
  better: Better | undefined;
  baseline: number | undefined;
  measured: number | undefined;
  allowed: number | undefined;
  status: 'ok' | 'REGRESSED' | 'NOT MEASURED' | 'no baseline';
}

export const TIMED_SYNC: string;
export const TIMED_LOOKUP: string;
export const MODEL_METRIC: string;
export const PHASE_METRIC: string;
export const PHASE_CALLS_METRIC: string;
export const RATIOS: ReadonlyArray<{ name: string; better: Better; what: string; compute: (metrics: KSummary['metrics']) => number | undefined }>;
export function measureRatios(summary: KSummary): Record<string, number | undefined>;
export function allowedValue(entry: Pick<BaselineEntry, 'value' | 'better' | 'margin'>): number;
export function compareRatios(measured: Record<string, number | undefined>, baseline: Baseline): { ok: boolean; rows: ComparisonRow[] };
export function formatComparison(result: { rows: ComparisonRow[] }): string;
export function buildBaseline(runs: Array<Record<string, number | undefined>>, previous: Baseline | undefined, recorded: Record<string, unknown>, defaultMargin?: number): Baseline;
export function ratioReport(summary: KSummary): string[];
