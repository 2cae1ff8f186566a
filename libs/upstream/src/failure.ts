import { HttpError, retryAfterSeconds } from "@switchyard/runtime";
import { FirstByteTimeout } from "./attempt-timeouts.js";
import { UpstreamError, WorkspaceKeyRefused } from "./errors.js";

/**
 * A failure that is not a provider's is not called one: a bug (a body that cannot be serialized, a
 * failed query) is a 500 logged with its cause. A request its client abandoned has no one to answer.
 */
function notFromProvider(error: unknown): HttpError {
  if (error instanceof Error && error.name === "AbortError") return new HttpError("bad_gateway", "Request aborted before a provider answered");
  return Object.assign(new HttpError("internal", "Internal server error"), { cause: error });
}

/** What the caller hears when no endpoint answered: the provider's own 4xx, a 429, a timeout, an overload (529), or a 502. */
export function upstreamFailure(error: unknown, timedOut: boolean): HttpError {
  if (timedOut) return new HttpError("timeout", "Request timed out, try again later");
  if (!(error instanceof UpstreamError)) return notFromProvider(error);
  if (error instanceof WorkspaceKeyRefused) return new HttpError("bad_gateway", error.message, { provider_status: error.status });
  if (error instanceof FirstByteTimeout) return new HttpError("timeout", "Request timed out: no provider sent a first byte within the gateway's first-byte timeout", { provider_message: error.message });
  if (error.status === 429) {
    // The provider's own Retry-After, passed on; without one the error handler's default applies.
    const headers = error.retryAfterMs === undefined ? undefined : { "Retry-After": retryAfterSeconds(error.retryAfterMs) };
    return new HttpError("rate_limited", "Rate limit exceeded by every available provider; try again later", undefined, headers);
  }
  if (error.status === 529) return new HttpError("provider_overloaded", "Provider returned error: overloaded, try again later", { provider_message: error.message });
  if (error.status !== null && error.status >= 400 && error.status < 500 && !error.retryable) {
    return new HttpError("bad_request", "Provider rejected the request", { provider_message: error.message });
  }
  return new HttpError("bad_gateway", "Provider returned error", { provider_message: error.message });
}
