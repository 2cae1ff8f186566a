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

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** How the gateway quotes a provider's answer in `provider_message`: `<provider> answered <status>: <body>`. */
const quoted = /^\S+ answered \d{3}: /;
/** The `message` of an error envelope cut short (a quoted body ends after 500 characters). */
const cutMessage = /"message"\s*:\s*"((?:[^"\\]|\\.)*)/;

/** The message of a provider's error body: Anthropic's and OpenAI's envelopes (`error.message`), a bare `message` or `error`. */
function messageOf(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (!isObject(parsed)) return undefined;
    if (isObject(parsed.error) && typeof parsed.error.message === "string") return parsed.error.message;
    if (typeof parsed.message === "string") return parsed.message;
    if (typeof parsed.error === "string") return parsed.error;
    return undefined;
  } catch {
    const cut = cutMessage.exec(body)?.[1];
    if (cut === undefined) return undefined;
    try {
      return JSON.parse(`"${cut}"`) as string;
    } catch {
      return cut;
    }
  }
}

/**
 * What the provider said when it rejected a request (a 4xx): the gateway's envelope names it
 * `provider_message` in its metadata, where Anthropic's has no place, so the message is the provider's own
 * words ("prompt is too long: 210000 tokens > 200000 maximum", which Claude Code reads to compact). Other
 * failures keep the gateway's message.
 */
export function anthropicErrorMessage(status: number, message: string, metadata: Json | undefined): string {
  const said = metadata?.provider_message;
  if (status >= 500 || typeof said !== "string") return message;
  const body = said.replace(quoted, "");
  return messageOf(body) ?? (body.trim() || message);
}

/**
 * Answers an error in Anthropic's shape on the Messages routes, with the same status, headers and logging as
 * every other error answer; a response already started just ends.
 */
export function sendAnthropicError(res: ServerResponse, error: unknown, logger: Logger, reqId: unknown): void {
  const { status, message, metadata } = describeError(error, logger, reqId, res);
  if (res.headersSent) {
    res.end();
    return;
  }
  setErrorHeaders(res, status);
  sendJson(res, status, anthropicErrorBody(status, anthropicErrorMessage(status, message, metadata)));
}
