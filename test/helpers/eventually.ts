/**
 * The one way a test waits: for a condition, never for a length of time. A condition that
 * never holds is a failure with the reason in it, never a `false` a caller can forget to
 * assert.
 */
export interface EventuallyOptions {
  /** What is awaited, for the error: "the service ready", "Redis mode back". */
  what: string;
  /** Generous on purpose: a passing test never waits for it. */
  timeoutMs?: number;
  intervalMs?: number;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `check` until it returns a truthy value and resolves to that value. A check that
 * throws (an assertion, a refused connection) is "not yet". At the deadline it throws an
 * Error naming `what` with the last value or error.
 */
export async function eventually<T>(check: () => T | Promise<T>, { what, timeoutMs = 30_000, intervalMs = 100 }: EventuallyOptions): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
      last = `last value ${JSON.stringify(value)}`;
    } catch (err) {
      last = `last error ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
