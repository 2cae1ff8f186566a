import type { ApiKey, LimitReset } from "@switchyard/contracts";

/** A row of `identity.api_keys` as selected by `keyColumns`. */
export interface KeyRow {
  hash: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  label: string;
  disabled: boolean;
  is_management: boolean;
  spend_limit: string | null;
  limit_reset: LimitReset | null;
  include_byok_in_limit: boolean;
  rate_limit_per_minute: number | null;
  expires_at: Date | null;
  creator_user_id: string | null;
  external_user: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export const keyColumns = `hash, organization_id::text, workspace_id::text, name, label, disabled, is_management,
  spend_limit::text, limit_reset, include_byok_in_limit, rate_limit_per_minute, expires_at, creator_user_id,
  external_user, created_at, updated_at`;

/** Settled spend per window in USD, from the usage ledger. */
export interface KeyUsage {
  total: number;
  daily: number;
  weekly: number;
  monthly: number;
  byokTotal: number;
  byokDaily: number;
  byokWeekly: number;
  byokMonthly: number;
}

export const noUsage: KeyUsage = {
  total: 0,
  daily: 0,
  weekly: 0,
  monthly: 0,
  byokTotal: 0,
  byokDaily: 0,
  byokWeekly: 0,
  byokMonthly: 0,
};

/** Usage in the window the key's limit resets on (all time when it never resets). */
export function usageInLimitWindow(row: Pick<KeyRow, "limit_reset" | "include_byok_in_limit">, usage: KeyUsage): number {
  const window = row.limit_reset;
  const own = window === "daily" ? usage.daily : window === "weekly" ? usage.weekly : window === "monthly" ? usage.monthly : usage.total;
  if (!row.include_byok_in_limit) return own;
  const byok =
    window === "daily" ? usage.byokDaily : window === "weekly" ? usage.byokWeekly : window === "monthly" ? usage.byokMonthly : usage.byokTotal;
  return own + byok;
}

export function toApiKey(row: KeyRow, usage: KeyUsage = noUsage): ApiKey {
  const limit = row.spend_limit === null ? null : Number(row.spend_limit);
  return {
    hash: row.hash,
    name: row.name,
    label: row.label,
    disabled: row.disabled,
    limit,
    // Rounded to the ledger's 12 places, so $1 − $0.9 reads 0.1 and not 0.09999999999999998.
    limit_remaining: limit === null ? null : Math.max(0, Number((limit - usageInLimitWindow(row, usage)).toFixed(12))),
    limit_reset: row.limit_reset,
    include_byok_in_limit: row.include_byok_in_limit,
    usage: usage.total,
    usage_daily: usage.daily,
    usage_weekly: usage.weekly,
    usage_monthly: usage.monthly,
    byok_usage: usage.byokTotal,
    byok_usage_daily: usage.byokDaily,
    byok_usage_weekly: usage.byokWeekly,
    byok_usage_monthly: usage.byokMonthly,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    creator_user_id: row.creator_user_id,
    workspace_id: row.workspace_id,
    external_user: row.external_user,
    is_management_key: row.is_management,
    rate_limit_per_minute: row.rate_limit_per_minute,
  };
}
