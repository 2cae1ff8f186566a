import { z } from "zod";
import { isoTimestamp, limitReset, uuid } from "./common.js";
import { picodollarAmount, storedInstant } from "./stored-values.js";

const loopbackHosts = new Set(["localhost", "127.0.0.1"]);

/**
 * Redirect targets: every https URL, or http on localhost/127.0.0.1 (on whatever port) for local CLI tools,
 * never with a fragment (RFC 6749 §3.1.2: the code is appended as a query parameter, and a fragment would
 * hide it from the server and keep it in the browser's history).
 * URL parsers disagree on backslashes, whitespace, control characters, userinfo and missing slashes
 * (`http://localhost:1\@evil.com` is localhost to one and evil.com to another), so those are refused:
 * what is left has the same host for every parser that later reads the stored string.
 */
export function isAllowedCallbackUrl(value: string): boolean {
  const authority = /^https?:\/\/([^/?#]+)/i.exec(value)?.[1];
  if (!authority || authority.includes("@") || value.includes("#") || /[\s\\\p{Cc}]/u.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  // Loopback spelled literally: not 127.1, 0x7f.0.0.1, 2130706433 or percent-escapes that parse to it.
  const host = authority.toLowerCase().replace(/:\d*$/, "");
  return url.protocol === "http:" && loopbackHosts.has(url.hostname) && host === url.hostname;
}

/** RFC 7636 §4.1: 43–128 characters from the unreserved set (an S256 challenge is 43 of them). */
const pkceString = z
  .string()
  .regex(/^[A-Za-z0-9\-._~]{43,128}$/, "must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'");

/** RFC 7636 §4.2: an S256 challenge is the unpadded base64url of a SHA-256 digest, so exactly 43 characters. */
const s256Challenge = /^[A-Za-z0-9_-]{43}$/;

export const codeChallengeMethod = z.enum(["S256", "plain"]);
export type CodeChallengeMethod = z.infer<typeof codeChallengeMethod>;

/**
 * Seconds are mandatory so a client cannot mean 23:59:59 and send 23:59; `Date#toISOString()` output
 * (what the SDK sends) passes.
 */
export const secondsPrecisionTimestamp = storedInstant(
  z
    .string()
    .regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/,
      "must be an ISO 8601 UTC timestamp with seconds (YYYY-MM-DDTHH:MM:SSZ)",
    ),
);

/** `POST /auth/keys/code` body; optional field names follow OpenRouter's. */
export const createAuthCodeBody = z.strictObject({
  callback_url: z
    .string()
    .max(2048, "must be at most 2048 characters")
    .refine(isAllowedCallbackUrl, "must be an https URL, or an http URL on localhost or 127.0.0.1, without a fragment"),
  code_challenge: pkceString.optional(),
  code_challenge_method: codeChallengeMethod.optional(),
  limit: picodollarAmount(z.number().finite().min(0, "must not be negative").max(1e9, "must be at most 1000000000")).optional(),
  expires_at: secondsPrecisionTimestamp.nullable().optional(),
  key_label: z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters").optional(),
  usage_limit_type: limitReset.optional(),
  workspace_id: uuid.optional(),
  spawn_agent: z.string().max(256).optional().describe("Agent identifier for spawn telemetry"),
  spawn_cloud: z.string().max(256).optional().describe("Cloud identifier for spawn telemetry"),
}).superRefine((body, ctx) => {
  // Another S256 challenge could never equal a verifier's digest: the code would be unredeemable.
  if (body.code_challenge_method === "S256" && body.code_challenge !== undefined && !s256Challenge.test(body.code_challenge)) {
    ctx.addIssue({ code: "custom", path: ["code_challenge"], message: "must be 43 characters of A-Z, a-z, 0-9, '-', '_' with code_challenge_method S256" });
  }
});
export type CreateAuthCodeBody = z.infer<typeof createAuthCodeBody>;

/** The spec's authorization code record. */
export const authCode = z.object({
  id: z.string().describe("The code to exchange at POST /auth/keys"),
  app_id: z.number().int(),
  created_at: isoTimestamp,
});
export type AuthCode = z.infer<typeof authCode>;
export const createAuthCodeResponse = z.object({ data: authCode });

/** `POST /auth/keys`: the PKCE exchange; the verifier is the proof, so no key is sent. */
export const exchangeAuthCodeBody = z.strictObject({
  code: z.string().min(1, "must not be empty").max(512),
  code_verifier: pkceString.optional(),
  code_challenge_method: codeChallengeMethod.nullable().optional(),
});
export type ExchangeAuthCodeBody = z.infer<typeof exchangeAuthCodeBody>;

export const exchangeAuthCodeResponse = z.object({
  key: z.string().describe("The new key's secret, shown once"),
  user_id: z.string().nullable(),
});
export type ExchangeAuthCodeResponse = z.infer<typeof exchangeAuthCodeResponse>;
