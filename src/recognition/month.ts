/** Calendar months in UTC, the period of the monthly quota. */

/** 'YYYY-MM' of the UTC month containing `ms`. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Milliseconds from `ms` to the start of the next UTC month. */
export function msUntilNextUtcMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - ms;
}
