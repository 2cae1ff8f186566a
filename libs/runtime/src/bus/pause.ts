/** A pause that `wake` ends at once: for retry loops that must stop without waiting out their backoff. */
export function wakeablePause(): { sleep(ms: number): Promise<void>; wake(): void } {
  let wake: (() => void) | undefined;
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    wake: () => wake?.(),
  };
}
