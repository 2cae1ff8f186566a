import { maxAccessTokenSeconds, type ClaimCondition, type OAuthError, type TokenExchangeBody, type TokenExchangeResponse } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";
import type { JWTPayload } from "jose";
import type { AccessTokens } from "./access-tokens.js";
import { policyById, type PolicyRow } from "./policies.js";
import { IssuerUnavailable, SubjectTokenRejected, type createSubjectTokenVerifier } from "./subject-token.js";

/** An RFC 6749 §5.2 error with its HTTP status. */
export class OAuthFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: OAuthError,
    /** Why, for the operator's log only. */
    readonly reason: string = body.error_description,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error_description);
  }
}

/** One answer for every way a subject token can fail to be accepted, so a caller learns nothing from it. */
export const notAccepted = (reason: string) =>
  new OAuthFailure(400, { error: "invalid_grant", error_description: "The subject token was not accepted" }, reason);

/** Issuance per policy: taken only once a policy has accepted the subject token, so refusals spend none of it. */
export interface IssuanceQuota {
  /** A slot for one exchange of the policy, as the function that gives it back; undefined when none is left. */
  take(policyId: string): (() => void) | undefined;
  /** The `Retry-After` value for a policy whose quota is used up. */
  retryAfter(): string;
}

export interface ExchangeDeps {
  db: Queryable;
  verifier: ReturnType<typeof createSubjectTokenVerifier>;
  tokens: AccessTokens;
  quota: IssuanceQuota;
  now?: () => number;
}

/**
 * 9999-12-31T23:59:59Z in seconds: a seen `jti` is kept at most until then. A later `exp` (1e20, 2^53) is past
 * what a timestamp holds; such a token stays exchangeable until long after this deployment, so its id is
 * kept for as long as the table can keep one, which refuses its replays just the same.
 */
const rememberedUntil = 253_402_300_799;

/** `*` matches a run of characters, empty included; everything else matches itself. */
const globMatches = (pattern: string, value: string) =>
  new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`, "s").test(value);

/** A claim's values as strings: a list claim holds when one of its items does. */
function claimValues(claims: JWTPayload, name: string): string[] {
  const value = claims[name];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v) => ["string", "number", "boolean"].includes(typeof v)).map(String);
}

const conditionHolds = (claims: JWTPayload, c: ClaimCondition) =>
  claimValues(claims, c.claim).some((value) => (c.equals !== undefined ? value === c.equals : globMatches(c.matches!, value)));

/**
 * RFC 8693 token exchange: the policy named, the subject token verified against its issuer, the claim
 * conditions, the target key, the policy's quota, replay protection; then an access token acting as the
 * target key that lives at most 15 minutes and never past the subject token.
 */
export async function exchangeToken(deps: ExchangeDeps, body: TokenExchangeBody): Promise<TokenExchangeResponse> {
  const now = deps.now ?? Date.now;
  // Before the subject token is looked at, so a replay-protected token is not spent on a refusal.
  if (!deps.tokens.canSign) {
    throw new OAuthFailure(
      500,
      { error: "server_error", error_description: "Token exchange is not configured on this deployment" },
      "SWITCHYARD_ENCRYPTION_KEY is not set, so no access-token signing key is kept",
    );
  }
  const policy = await policyById(deps.db, body.federation_policy_id);
  if (!policy || policy.disabled) throw notAccepted(policy ? "policy is disabled" : "no such policy");
  let claims: JWTPayload;
  try {
    claims = await deps.verifier.verify(body.subject_token, {
      issuer: policy.issuer,
      audiences: policy.audiences,
      maxTokenLifetimeSeconds: policy.max_token_lifetime_seconds,
    });
  } catch (error) {
    if (error instanceof IssuerUnavailable) {
      throw new OAuthFailure(
        503,
        { error: "temporarily_unavailable", error_description: "The issuer's keys could not be fetched; retry later" },
        error.message,
        { "Retry-After": error.retryAfter },
      );
    }
    if (error instanceof SubjectTokenRejected) throw notAccepted(error.message);
    throw error;
  }
  const failed = policy.claim_conditions.find((c) => !conditionHolds(claims, c));
  if (failed) throw notAccepted(`claim condition on ${failed.claim} does not hold`);
  const expiresIn = Math.min(maxAccessTokenSeconds, Math.floor((claims.exp ?? 0) - now() / 1000));
  if (expiresIn < 1) throw notAccepted("subject token expires within a second");

  const [key] = await deps.db.query<{ workspace_id: string; disabled: boolean; is_management: boolean; expires_at: Date | null }>(
    `SELECT workspace_id::text, disabled, is_management, expires_at FROM identity.api_keys WHERE hash = $1 AND organization_id = $2`,
    [policy.target_key_hash, policy.organization_id],
  );
  if (!key || key.disabled || key.is_management || (key.expires_at && key.expires_at.getTime() <= now())) {
    throw notAccepted("target key is missing, disabled, expired or a management key");
  }

  if (policy.replay_protection) {
    if (typeof claims.jti !== "string" || claims.jti.length === 0 || claims.jti.length > 512) throw notAccepted("replay protection needs a jti");
    // Postgres text cannot hold NUL, and no issuer mints ids with control characters in them.
    if (/\p{Cc}/u.test(claims.jti)) throw notAccepted("jti has control characters");
  }

  // Counted only now, so tokens the policy refuses cannot use up its workload's quota; and before the jti is
  // spent, so a workload told to retry later can retry with the same subject token.
  const giveBack = deps.quota.take(policy.id);
  if (!giveBack) {
    throw new OAuthFailure(
      429,
      { error: "temporarily_unavailable", error_description: "Too many token requests for this policy; retry later" },
      "the policy's exchanges per minute are used up",
      { "Retry-After": deps.quota.retryAfter() },
    );
  }
  try {
    return await issueFor(deps, policy, key.workspace_id, claims, expiresIn);
  } catch (error) {
    giveBack();
    throw error;
  }
}

/** The jti recorded (with replay protection), then the access token itself. */
async function issueFor(
  deps: ExchangeDeps,
  policy: PolicyRow,
  workspaceId: string,
  claims: JWTPayload,
  expiresIn: number,
): Promise<TokenExchangeResponse> {
  if (policy.replay_protection) {
    // Kept until the subject token expires: after that it could not be exchanged anyway.
    const fresh = await deps.db.query(
      `INSERT INTO identity.federation_seen_tokens (issuer, jti, expires_at) VALUES ($1, $2, to_timestamp($3)) ON CONFLICT DO NOTHING RETURNING 1`,
      [policy.issuer, claims.jti, Math.min(claims.exp ?? 0, rememberedUntil)],
    );
    if (fresh.length === 0) throw notAccepted("jti already exchanged");
  }

  const accessToken = await deps.tokens.issue(
    {
      sub: policy.target_key_hash,
      org: policy.organization_id,
      ws: workspaceId,
      pol: policy.id,
      scope: "inference",
      act: { iss: policy.issuer, sub: String(claims.sub ?? "") },
    },
    expiresIn,
  );
  return {
    access_token: accessToken,
    issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
    token_type: "Bearer",
    expires_in: expiresIn,
    scope: "inference",
  };
}

/** Seen subject-token ids past their expiry are useless: this keeps the table small. */
export async function forgetExpiredTokenIds(db: Queryable): Promise<number> {
  return (await db.query(`DELETE FROM identity.federation_seen_tokens WHERE expires_at < now() - interval '5 minutes' RETURNING 1`)).length;
}
