import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";

/**
 * One signal for the client going away and for a deadline shared by every attempt of a request; the
 * timer ends with the response.
 */
export function requestDeadline(res: ServerResponse, ms: number): { signal: AbortSignal; timedOut: () => boolean } {
  const abort = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    abort.abort(new Error("deadline passed"));
  }, ms);
  res.on("close", () => {
    clearTimeout(deadline);
    // An AbortError, as fetch names one: what reads it knows nobody is waiting for the answer.
    if (!res.writableFinished) abort.abort(new DOMException("client disconnected", "AbortError"));
  });
  return { signal: abort.signal, timedOut: () => timedOut };
}

/**
 * Runs `work` with a signal that aborts when `signal` does (with its reason) or once `ms` have passed (a
 * `TimeoutError`), whichever comes first. The timer and the listener on `signal`, which may outlive many
 * such calls (a request's), go as soon as the work ends.
 */
export async function withTimeout<T>(signal: AbortSignal, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const follow = () => abort.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  const timer = setTimeout(() => abort.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), ms);
  try {
    return await work(abort.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", follow);
  }
}

/** `gen-<unix seconds>-<20 hex>`, as OpenRouter's generation ids look. */
export const newGenerationId = (): string => `gen-${Math.floor(Date.now() / 1000)}-${randomUUID().replaceAll("-", "").slice(0, 20)}`;
