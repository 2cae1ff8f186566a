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
    if (!res.writableFinished) abort.abort(new Error("client disconnected"));
  });
  return { signal: abort.signal, timedOut: () => timedOut };
}

/** `gen-<unix seconds>-<20 hex>`, as OpenRouter's generation ids look. */
export const newGenerationId = (): string => `gen-${Math.floor(Date.now() / 1000)}-${randomUUID().replaceAll("-", "").slice(0, 20)}`;
