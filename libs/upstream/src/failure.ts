import { HttpError, retryAfterSeconds } from "@switchyard/runtime";
import { FirstByteTimeout } from "./attempt-timeouts.js";
import { UpstreamError } from "./errors.js";

/** What the caller hears when no endpoint answered: the provider's own 4xx, a 429, a timeout, an overload (529), or a 502. */
export function upstreamFailure(error: unknown, timedOut: boolean): HttpError {
  if (timedOut) return new HttpError("timeout", "Request timed out, try again later");
  if (!(error instanceof UpstreamError)) return new HttpError("bad_gateway", "Provider returned error");
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
