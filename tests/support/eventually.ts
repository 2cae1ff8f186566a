/**
 * Retries `probe` until it returns true or `withinMs` passes; returns how long it took. Key changes reach
 * routers as events, so "within a second" is the promise, not "before the PATCH response".
 *
 * The pause between probes starts at 10 ms and grows to 250 ms: a quick condition is still seen at once,
 * and a long wait through the router (charges after a NATS outage, up to 45 s) stays far below the
 * caller's rate limit instead of polling a hundred times a second until it is refused with 429.
 */
export async function eventually(probe: () => Promise<boolean>, withinMs = 1000): Promise<number> {
  const start = Date.now();
  for (let pause = 10; ; pause = Math.min(250, pause * 1.5)) {
    if (await probe()) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, pause));
  }
}
