import type { ServerResponse } from "node:http";
import type { Logger } from "../log.js";
import { describeError, sendJson, setErrorHeaders } from "./request-basics.js";

/** The `type` Anthropic's API gives an error of each HTTP status; the Anthropic SDK and Claude Code read it. */
export function anthropicErrorType(status: number): string {
  if (status === 400 || status === 422) return "invalid_request_error";
  if (status === 401) return "authentication_error";
  if (status === 402) return "billing_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  if (status === 504 || status === 524) return "timeout_error";
  return "api_error";
}

/** An error in Anthropic's shape, `{ type: "error", error: { type, message } }`, for clients of its Messages API. */
export function anthropicErrorBody(status: number, message: string) {
  return { type: "error", error: { type: anthropicErrorType(status), message } };
}

/**
 * Answers an error in Anthropic's shape on the Messages routes, with the same status, headers and logging as
 * every other error answer; a response already started just ends.
 */
export function sendAnthropicError(res: ServerResponse, error: unknown, logger: Logger, reqId: unknown): void {
  const { status, message } = describeError(error, logger, reqId, res);
  if (res.headersSent) {
    res.end();
    return;
  }
  setErrorHeaders(res, status);
  sendJson(res, status, anthropicErrorBody(status, message));
}
