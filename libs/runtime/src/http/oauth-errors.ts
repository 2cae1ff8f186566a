import type { ServerResponse } from "node:http";
import type { OAuthError } from "@switchyard/contracts";
import type { Logger } from "../log.js";
import { carriesRetryAfter } from "./errors.js";
import { describeError, sendJson, setErrorHeaders } from "./request-basics.js";

/** RFC 6749 §5.2 has no code per HTTP status: a request the server could not take is `invalid_request`. */
export function oauthErrorCodeFor(status: number): OAuthError["error"] {
  if (carriesRetryAfter(status)) return "temporarily_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request";
}

/** Headers every token endpoint answer carries (RFC 6749 §5.1): nothing it says may be cached. */
export const oauthNoStore = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/**
 * Answers an error in RFC 6749 §5.2's shape, `{ error, error_description }`, for the token endpoint,
 * whose clients (OAuth libraries, not the OpenRouter SDK) read no other; never cached, and a 429 or
 * 503 always says when to retry.
 */
export function sendOAuthError(res: ServerResponse, error: unknown, logger: Logger, reqId: unknown): void {
  const { status, message } = describeError(error, logger, reqId, res);
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(oauthNoStore)) res.setHeader(name, value);
  setErrorHeaders(res, status);
  sendJson(res, status, { error: oauthErrorCodeFor(status), error_description: message } satisfies OAuthError);
}
