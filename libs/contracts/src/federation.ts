import { z } from "zod";
import { isoTimestamp, queryInt, uuid } from "./common.js";

/**
 * A condition on one claim of the subject token: `equals` an exact value, or `matches` a glob where `*`
 * stands for any run of characters (e.g. `repo:acme/api:ref:refs/heads/*`).
 */
export const claimCondition = z
  .strictObject({
    claim: z.string().min(1).max(128),
    equals: z.string().min(1).max(1024).optional(),
    matches: z.string().min(1).max(1024).optional(),
  })
  .refine((c) => (c.equals === undefined) !== (c.matches === undefined), { message: "give exactly one of equals or matches" });
export type ClaimCondition = z.infer<typeof claimCondition>;

/** Which workload-identity tokens may be exchanged for access tokens acting as which inference key. */
export const federationPolicy = z.object({
  id: uuid,
  name: z.string(),
  issuer: z.string().describe("Trusted issuer URL; the subject token's `iss` must equal it exactly"),
  audiences: z.array(z.string()).describe("The subject token's `aud` must contain one of these"),
  claim_conditions: z.array(claimCondition).describe("All must hold; at least one is on `sub`"),
  target_key_hash: z.string().describe("The inference key the access tokens act as"),
  replay_protection: z.boolean().describe("Each subject token (by `jti`, per issuer) may be exchanged once"),
  max_token_lifetime_seconds: z.number().int().nullable().describe("Longest subject-token lifetime (`exp` − `iat`) accepted"),
  disabled: z.boolean(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp.nullable(),
});
export type FederationPolicy = z.infer<typeof federationPolicy>;

const issuer = z
  .string()
  .max(512)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "must be an https URL without credentials, query or fragment");
const conditions = z
  .array(claimCondition)
  .min(1)
  .max(32)
  .refine((list) => list.some((c) => c.claim === "sub"), "must include a condition on sub: an audience alone lets in every workload of a shared issuer");
const settings = {
  name: z.string().trim().min(1).max(100),
  audiences: z.array(z.string().min(1).max(512)).min(1).max(16),
  claim_conditions: conditions,
  replay_protection: z.boolean(),
  max_token_lifetime_seconds: z.number().int().min(60).max(86_400).nullable(),
  disabled: z.boolean(),
};

export const createFederationPolicyBody = z.strictObject({
  ...settings,
  issuer,
  target_key_hash: z.string().regex(/^[0-9a-f]{64}$/, "must be the 64-character hex hash of a key"),
  replay_protection: settings.replay_protection.optional(),
  max_token_lifetime_seconds: settings.max_token_lifetime_seconds.optional(),
  disabled: settings.disabled.optional(),
});
export type CreateFederationPolicyBody = z.infer<typeof createFederationPolicyBody>;

export const updateFederationPolicyBody = z.strictObject({
  name: settings.name.optional(),
  audiences: settings.audiences.optional(),
  claim_conditions: settings.claim_conditions.optional(),
  replay_protection: settings.replay_protection.optional(),
  max_token_lifetime_seconds: settings.max_token_lifetime_seconds.optional(),
  disabled: settings.disabled.optional(),
});
export type UpdateFederationPolicyBody = z.infer<typeof updateFederationPolicyBody>;

export const federationPolicyIdParams = z.object({ id: uuid });
export const listFederationPoliciesQuery = z.object({
  offset: queryInt(0, 1_000_000_000).optional(),
  limit: queryInt(1, 1000).optional(),
});
export const federationPolicyResponse = z.object({ data: federationPolicy });
export const listFederationPoliciesResponse = z.object({ data: z.array(federationPolicy), total_count: z.number().int() });
export const deleteFederationPolicyResponse = z.object({ deleted: z.literal(true) });
