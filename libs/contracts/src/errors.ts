import { z } from "zod";

/** The envelope of every error except the token exchange's: `code` repeats the HTTP status. */
export const errorEnvelope = z.object({
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelope>;

/** RFC 6749 §5.2 error body, used by `POST /oauth/token` only. */
export const oauthErrorCode = z.enum([
  "invalid_request",
  "invalid_grant",
  "unsupported_grant_type",
  "invalid_scope",
  "server_error",
  "temporarily_unavailable",
]);
export const oauthError = z.object({ error: oauthErrorCode, error_description: z.string() });
export type OAuthError = z.infer<typeof oauthError>;

/** Anthropic's error body, which the Messages routes answer with: its SDK and Claude Code read no other. */
export const anthropicError = z.object({
  type: z.literal("error"),
  error: z.object({ type: z.string().describe("invalid_request_error, authentication_error, rate_limit_error..."), message: z.string() }),
});

/** The closed set of error kinds services return; the error handler maps each to its status. */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  unavailable: 503,
  timeout: 524,
  provider_overloaded: 529,
} as const;
export type ErrorKind = keyof typeof errorStatus;
