/**
 * Reads a check's figures from Prometheus's HTTP API (/api/v1/query): the API's per-model
 * series (model_recognitions_total, model_inference_duration_seconds, model_feedback_total)
 * of one RecognitionService, as its ServiceMonitor has them scraped: `namespace` and
 * `service` (the API Service, <name>-api) are the Prometheus Operator's target labels.
 */
import type { ModelRef } from '../desired/rollout.js';
import type { Figures, SideCounts } from './judge.js';

export class PrometheusError extends Error {
  override readonly name = 'PrometheusError';
}

export interface FigureQuery {
  namespace: string;
  /** The API Service's name. */
  service: string;
  stable: ModelRef;
  canary: ModelRef;
  windowSeconds: number;
}

const QUERY_TIMEOUT_MS = 10_000;

/** A label value inside a PromQL string literal. */
const quote = (v: string) => JSON.stringify(v);

/**
 * Each side's selector. A side with a version selects it; without one (Triton's newest) it
 * selects its model, and the canary of the same model every version but the stable one (the
 * CRD pins the stable version for such a canary).
 */
export function sideSelectors(q: FigureQuery): Record<'stable' | 'canary', string> {
  const base = `namespace=${quote(q.namespace)},service=${quote(q.service)}`;
  const of = (m: ModelRef, other?: ModelRef) => {
    const version = m.version ? `,version=${quote(m.version)}` : other && other.name === m.name && other.version ? `,version!=${quote(other.version)}` : '';
    return `${base},model=${quote(m.name)}${version}`;
  };
  return { stable: of(q.stable), canary: of(q.canary, q.stable) };
}

/** The PromQL of each count of one side. */
export function sideQueries(selector: string, windowSeconds: number): Record<keyof SideCounts, string> {
  const inc = (metric: string, extra = '') => `sum(increase(${metric}{${selector}${extra}}[${windowSeconds}s]))`;
  return {
    requests: inc('model_recognitions_total', ',attempt="first"'),
    errors: inc('model_recognitions_total', ',attempt="first",outcome=~"ERROR|timeout"'),
    latencySumSeconds: inc('model_inference_duration_seconds_sum'),
    latencyCount: inc('model_inference_duration_seconds_count'),
    ratings: inc('model_feedback_total'),
    badRatings: inc('model_feedback_total', ',rating="bad"'),
  };
}

/** Longest piece of Prometheus's own error text carried into status and Events. */
const MAX_ERROR_CHARS = 300;

/** An instant query's value at `time` (Unix seconds): the sum of the vector (no series - 0). */
export async function queryValue(baseUrl: string, expr: string, time: number): Promise<number> {
  const url = `${baseUrl.replace(/\/+$/, '')}/api/v1/query?${new URLSearchParams({ query: expr, time: time.toFixed(3) }).toString()}`;
  // Only the origin in messages: they reach status and Events.
  const where = new URL(baseUrl).origin;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(QUERY_TIMEOUT_MS) });
  } catch (err) {
    throw new PrometheusError(`Prometheus at ${where} did not answer: ${(err as Error).message}`.slice(0, MAX_ERROR_CHARS + 100));
  }
  const body = (await res.json().catch(() => undefined)) as
    | { status?: string; error?: string; data?: { resultType?: string; result?: Array<{ value: [number, string] }> } }
    | undefined;
  if (!res.ok || body?.status !== 'success' || body.data?.resultType !== 'vector') {
    throw new PrometheusError(`Prometheus at ${where} refused a query (HTTP ${res.status}): ${(body?.error ?? 'no vector in the answer').slice(0, MAX_ERROR_CHARS)}`);
  }
  const total = (body.data.result ?? []).reduce((sum, r) => sum + Number(r.value[1]), 0);
  return Number.isFinite(total) ? total : 0;
}

/**
 * Every count of both sides over the same window, ending at `now`: queries evaluated at
 * their own instants would cover windows a little apart, and errors could then outnumber
 * the requests they are part of.
 */
export async function readFigures(baseUrl: string, q: FigureQuery, now: Date): Promise<Figures> {
  const selectors = sideSelectors(q);
  const time = now.getTime() / 1000;
  const side = async (selector: string): Promise<SideCounts> => {
    const queries = Object.entries(sideQueries(selector, q.windowSeconds)) as Array<[keyof SideCounts, string]>;
    const values = await Promise.all(queries.map(([, expr]) => queryValue(baseUrl, expr, time)));
    return Object.fromEntries(queries.map(([k], i) => [k, values[i]])) as unknown as SideCounts;
  };
  const [stable, canary] = await Promise.all([side(selectors.stable), side(selectors.canary)]);
  return { stable, canary };
}
