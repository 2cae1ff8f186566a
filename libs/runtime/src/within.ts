/**
 * `promise`, or a rejection with `message` if it has not settled within `ms`. The timer goes when it
 * settles; the promise itself is not stopped, so its own failure is still handled by whoever made it.
 */
export function within<T>(promise: Promise<T>, ms: number, message = `timed out after ${ms} ms`): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
