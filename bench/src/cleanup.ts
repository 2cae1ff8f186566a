/** What the benchmark started, stopped in reverse order at the end, on failure, and on SIGINT or SIGTERM. */
const stoppers: Array<() => Promise<void>> = [];

export function onCleanup(stop: () => Promise<void>): void {
  stoppers.push(stop);
}

let running: Promise<void> | undefined;

/**
 * Stops everything registered, last first; a failing stop is printed and the others still run. A call while
 * a cleanup runs (a signal's and the benchmark's own `finally`) waits for that one, so neither returns, and
 * the process exits, while a stop the other took is still under way.
 */
export function cleanup(): Promise<void> {
  running ??= (async () => {
    for (let stop = stoppers.pop(); stop; stop = stoppers.pop()) {
      try {
        await stop();
      } catch (error) {
        console.error("cleanup:", error);
      }
    }
  })().finally(() => {
    running = undefined;
  });
  return running;
}

/** In a process the benchmark forked: `stop` when the parent says "stop", and when the parent is gone (killed, crashed). */
export function stopWithParent(stop: () => void): void {
  process.on("message", (message: unknown) => {
    if (message === "stop") stop();
  });
  process.on("disconnect", stop);
}

/** Ctrl-C (or a SIGTERM) stops what was started before the benchmark exits. */
export function cleanupOnSignals(): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping what the benchmark started`);
      void cleanup().finally(() => process.exit(130));
    });
  }
}
