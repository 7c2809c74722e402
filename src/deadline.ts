/**
 * Deadlines and cancellation, one way everywhere: an AbortSignal built from
 * AbortSignal.timeout (the clock) and AbortSignal.any (the caller's own signal), and a
 * race of a promise against such a signal. The race does not cancel the work itself;
 * pass the signal down to whatever can stop early. Like AbortSignal.timeout, the clock
 * does not hold the process open: the server's sockets and pools do that.
 */

/** A signal that aborts at `deadline` (epoch ms) or as soon as any given signal aborts. */
export function deadlineSignal(deadline: number, ...signals: Array<AbortSignal | undefined>): AbortSignal {
  return timeoutSignal(Math.max(0, deadline - Date.now()), ...signals);
}

/** A signal that aborts after `ms`, or as soon as any given signal aborts. */
export function timeoutSignal(ms: number, ...signals: Array<AbortSignal | undefined>): AbortSignal {
  const clock = AbortSignal.timeout(Math.max(0, Math.ceil(ms)));
  const others = signals.filter((s): s is AbortSignal => s !== undefined);
  return others.length === 0 ? clock : AbortSignal.any([clock, ...others]);
}

/** True when a signal's reason is the clock running out (AbortSignal.timeout's TimeoutError). */
export function isTimeoutReason(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}

/**
 * Settles as `work` does, or rejects with the signal's reason once it aborts, whichever
 * comes first. `work` keeps running after an abort; its late rejection is swallowed.
 */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** `work`'s value, or `onTimeout`'s when `ms` pass first. */
export async function withTimeout<T, U>(work: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  const signal = timeoutSignal(ms);
  try {
    return await raceSignal(work, signal);
  } catch (err) {
    if (signal.aborted && err === signal.reason) return onTimeout();
    throw err;
  }
}
