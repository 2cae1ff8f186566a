import { z } from "zod";
import { isoTimestamp, limitReset, queryBool, queryInt, uuid } from "./common.js";
import { picodollarAmount, storedInstant } from "./stored-values.js";

/** The API key record of the spec (never carries the secret). */
export const apiKey = z.object({
  hash: z.string().describe("SHA-256 hex digest of the secret; identifies the key"),
  name: z.string(),
  label: z.string().describe("Masked form of the key"),
  disabled: z.boolean(),
  limit: z.number().nullable().describe("Spending limit in USD; null means no limit"),
  limit_remaining: z.number().nullable(),
  limit_reset: limitReset.nullable(),
  include_byok_in_limit: z.boolean(),
  usage: z.number(),
  usage_daily: z.number(),
  usage_weekly: z.number(),
  usage_monthly: z.number(),
  byok_usage: z.number(),
  byok_usage_daily: z.number(),
  byok_usage_weekly: z.number(),
  byok_usage_monthly: z.number(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp.nullable(),
  expires_at: isoTimestamp.nullable(),
  creator_user_id: z.string().nullable(),
  workspace_id: uuid,
  external_user: z.string().nullable().describe("The partner's end user the key was made for (`external.user` at creation)"),
  is_management_key: z.boolean().describe("Switchyard extension: whether this is a management key"),
  rate_limit_per_minute: z.number().int().nullable().describe("Switchyard extension: per-key request rate"),
});
export type ApiKey = z.infer<typeof apiKey>;

const name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const limit = picodollarAmount(z.number().finite().min(0, "must not be negative").max(1e9, "must be at most 1000000000")).nullable();
const rateLimit = z.number().int().min(1).max(1_000_000).nullable();

export const updateApiKeyBody = z.strictObject({
  name: name.optional(),
  disabled: z.boolean().optional(),
  limit: limit.optional(),
  limit_reset: limitReset.nullable().optional(),
  include_byok_in_limit: z.boolean().optional(),
  rate_limit_per_minute: rateLimit.optional(),
});
export type UpdateApiKeyBody = z.infer<typeof updateApiKeyBody>;

export const createApiKeyBody = z.strictObject({
  name,
  limit: limit.optional(),
  limit_reset: limitReset.nullable().optional(),
  include_byok_in_limit: z.boolean().optional(),
  expires_at: storedInstant(z.iso.datetime({ offset: true })).nullable().optional(),
  workspace_id: uuid.optional(),
  creator_user_id: z.string().max(256).nullable().optional(),
  is_management_key: z.boolean().optional(),
  rate_limit_per_minute: rateLimit.optional(),
  external: z
    .strictObject({
      user: z.string().trim().min(1, "must not be empty").max(256, "must be at most 256 characters"),
      api_key: z.unknown().optional(),
    })
    .refine((external) => external.api_key === undefined, {
      path: ["api_key"],
      message: "a secret of the partner's is not taken: the gateway makes each key's secret and returns it once",
    })
    .optional(),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;

export const keyHashParams = z.object({
  hash: z.string().regex(/^[0-9a-f]{64}$/, "must be the 64-character hex hash of a key"),
});

export const listApiKeysQuery = z.object({
  offset: queryInt(0, 1_000_000_000).optional(),
  limit: queryInt(1, 1000).optional(),
  include_disabled: queryBool.optional(),
  workspace_id: uuid.optional(),
});

export const apiKeyResponse = z.object({ data: apiKey });
export const createApiKeyResponse = z.object({ data: apiKey, key: z.string().describe("The secret, shown once") });
export const listApiKeysResponse = z.object({ data: z.array(apiKey), total_count: z.number().int() });
export const deleteApiKeyResponse = z.object({ deleted: z.literal(true) });

/** `GET /key`: the calling key's own record. */
export const currentKey = apiKey
  .pick({
    hash: true,
    name: true,
    label: true,
    limit: true,
    limit_remaining: true,
    limit_reset: true,
    include_byok_in_limit: true,
    usage: true,
    usage_daily: true,
    usage_weekly: true,
    usage_monthly: true,
    byok_usage: true,
    byok_usage_daily: true,
    byok_usage_weekly: true,
    byok_usage_monthly: true,
    is_management_key: true,
    creator_user_id: true,
    expires_at: true,
  })
  .extend({
    is_free_tier: z.boolean(),
    is_provisioning_key: z.boolean(),
    organization_id: z.string().nullable(),
    workspace_id: z.string().nullable(),
    allowed_data_regions: z.array(z.string()),
    free_model_daily_requests: z.object({ limit: z.number().int(), remaining: z.number().int(), used: z.number().int() }),
    rate_limit: z.object({ interval: z.string(), note: z.string(), requests: z.number().int() }),
  });
export const currentKeyResponse = z.object({ data: currentKey });
