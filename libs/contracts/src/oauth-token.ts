import { z } from "zod";
import { uuid } from "./common.js";

export const tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange";
export const jwtTokenType = "urn:ietf:params:oauth:token-type:jwt";
export const accessTokenType = "urn:ietf:params:oauth:token-type:access_token";
/** Spec: access tokens live at most 15 minutes. */
export const maxAccessTokenSeconds = 900;

const exactly = <T extends string>(value: T) =>
  z.literal(value, { error: `must be exactly ${value}` });

/** RFC 6749 §3.2: a parameter sent without a value is treated as omitted. */
const optionalParam = <T extends string>(value: T, message: string) =>
  z
    .literal([value, ""], { error: message })
    .optional()
    .transform((given) => (given === "" ? undefined : (given as T | undefined)));

/**
 * `POST /oauth/token` form fields (RFC 8693). Unknown parameters are dropped rather than rejected:
 * RFC 6749 §3.2 tells the server to ignore parameters it does not recognise.
 */
export const tokenExchangeBody = z.object({
  grant_type: exactly(tokenExchangeGrantType),
  subject_token: z.string().min(1, "must not be empty").max(16384, "must be at most 16384 characters"),
  subject_token_type: exactly(jwtTokenType),
  federation_policy_id: uuid,
  requested_token_type: optionalParam(accessTokenType, `must be exactly ${accessTokenType}`),
  scope: optionalParam("inference", "only inference is available"),
});
export type TokenExchangeBody = z.infer<typeof tokenExchangeBody>;

export const tokenExchangeResponse = z.object({
  access_token: z.string().describe("Short-lived JWT to send as Authorization: Bearer"),
  issued_token_type: z.literal(accessTokenType),
  token_type: z.literal("Bearer"),
  expires_in: z
    .number()
    .int()
    .min(1)
    .max(maxAccessTokenSeconds)
    .describe("Seconds until expiry; never later than the subject token's own expiry"),
  scope: z.string(),
});
export type TokenExchangeResponse = z.infer<typeof tokenExchangeResponse>;

/** `iss` and `aud` of the access tokens identity signs; the router accepts no other. */
export const accessTokenIssuer = "switchyard";
export const accessTokenAudience = "switchyard:inference";

/** What an access token says beyond the registered claims: whom it acts as, for whom, under which policy. */
export const accessTokenClaims = z.object({
  /** The target key's hash: the token acts as this key. */
  sub: z.string().regex(/^[0-9a-f]{64}$/),
  org: uuid,
  ws: uuid,
  /** The federation policy that allowed the exchange. */
  pol: uuid,
  scope: z.literal("inference"),
  /** RFC 8693 actor: the workload whose token was exchanged. */
  act: z.object({ iss: z.string(), sub: z.string() }),
  jti: z.string(),
});
export type AccessTokenClaims = z.infer<typeof accessTokenClaims>;
