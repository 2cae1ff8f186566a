/**
 * Retries `probe` until it returns true or `withinMs` passes; returns how long it took. Key changes reach
 * routers as events, so "within a second" is the promise, not "before the PATCH response".
 */
export async function eventually(probe: () => Promise<boolean>, withinMs = 1000): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
