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
export interface RatioDef {
  name: string;
  better: Better;
  what: string;
  compute: (metrics: KSummary['metrics']) => number | undefined;
}
export const RATIOS: ReadonlyArray<RatioDef>;
export const GRPC_INFER: string;
export const GRPC_API: string;
export const V2_SNAPS: readonly string[];
export const V2_FIELDS: readonly string[];
export const GRPC_RATIOS: ReadonlyArray<RatioDef>;
export const RATIO_SETS: { smoke: ReadonlyArray<RatioDef>; grpc: ReadonlyArray<RatioDef> };
export interface ServerView { n: number; queue: number; compute: number; request: number; batch: number }
export function serverView(metrics: KSummary['metrics'], from: string, to: string): ServerView | undefined;
export function measureRatios(summary: KSummary, defs?: ReadonlyArray<RatioDef> | number): Record<string, number | undefined>;
export function allowedValue(entry: Pick<BaselineEntry, 'value' | 'better' | 'margin'>): number;
export function compareRatios(measured: Record<string, number | undefined>, baseline: Baseline): { ok: boolean; rows: ComparisonRow[] };
export function formatComparison(result: { rows: ComparisonRow[] }): string;
export function buildBaseline(runs: Array<Record<string, number | undefined>>, previous: Baseline | undefined, recorded: Record<string, unknown>, defaultMargin?: number, defs?: ReadonlyArray<RatioDef>): Baseline;
export function ratioReport(summary: KSummary): string[];
export function grpcRatioReport(summary: KSummary): string[];
