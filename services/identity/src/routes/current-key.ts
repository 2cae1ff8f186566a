import { callerOf } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { getKey, type KeyDeps } from "../keys/service.js";

export interface CurrentKeyOptions {
  /** Requests per minute a key gets when it has no setting of its own. */
  defaultRateLimitPerMinute: number;
}

/** `GET /key`: every key may read its own record. */
export const currentKeyRoute =
  (deps: KeyDeps, options: CurrentKeyOptions): RequestHandler =>
  async (_req, res) => {
    const caller = callerOf(res);
    const key = await getKey(deps.db, caller.organizationId, caller.keyHash);
    const requests = key.rate_limit_per_minute ?? options.defaultRateLimitPerMinute;
    res.json({
      data: {
        hash: key.hash,
        name: key.name,
        label: key.label,
        limit: key.limit,
        limit_remaining: key.limit_remaining,
        limit_reset: key.limit_reset,
        include_byok_in_limit: key.include_byok_in_limit,
        usage: key.usage,
        usage_daily: key.usage_daily,
        usage_weekly: key.usage_weekly,
        usage_monthly: key.usage_monthly,
        byok_usage: key.byok_usage,
        byok_usage_daily: key.byok_usage_daily,
        byok_usage_weekly: key.byok_usage_weekly,
        byok_usage_monthly: key.byok_usage_monthly,
        is_free_tier: false,
        is_management_key: key.is_management_key,
        is_provisioning_key: key.is_management_key,
        creator_user_id: key.creator_user_id,
        expires_at: key.expires_at,
        organization_id: caller.organizationId,
        workspace_id: key.workspace_id,
        allowed_data_regions: [],
        free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
        rate_limit: { interval: "1m", requests, note: `${requests} requests per minute for this key` },
      },
    });
  };
