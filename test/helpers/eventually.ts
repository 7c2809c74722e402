/** Polls `check` every 100 ms until it holds or `timeoutMs` passes; returns its last answer. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}
