import { ApiError, type Call } from "../api.js";

/** The gateway's shapes as the console reads them (libs/contracts/src/api-key.ts, guardrails.ts, workspace.ts). */
export type LimitReset = "daily" | "weekly" | "monthly";

export interface ApiKey {
  hash: string;
  name: string;
  label: string;
  disabled: boolean;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: LimitReset | null;
  include_byok_in_limit: boolean;
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  /** Spend on the workspace's own provider keys (BYOK): not in `usage`, in `limit_remaining` when `include_byok_in_limit`. */
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
  created_at: string;
  expires_at: string | null;
  workspace_id: string;
  is_management_key: boolean;
  rate_limit_per_minute: number | null;
}

export interface Workspace {
  id: string;
  name: string;
  is_default: boolean;
  updated_at: string | null;
  /** Input/output logging: whether the workspace keeps what its generations were sent and answered, and how often. */
  is_observability_io_logging_enabled: boolean;
  io_logging_sampling_rate: number;
}

export type DataRegion = "global" | "europe" | "us";
export type FilterAction = "redact" | "block" | "flag";

export interface Guardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string;
  limit_usd: number | null;
  reset_interval: LimitReset | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_data_regions: DataRegion[] | null;
  enforce_zdr: boolean | null;
  enforce_zdr_anthropic: boolean;
  enforce_zdr_openai: boolean;
  enforce_zdr_google: boolean;
  enforce_zdr_xai: boolean;
  enforce_zdr_other: boolean;
  content_filter_builtins: { slug: string; label: string; action: FilterAction; scan_scope?: string }[];
  content_filters: { pattern: string; label?: string | null; action: FilterAction }[] | null;
  updated_at: string | null;
}

export interface KeyAssignment {
  guardrail_id: string;
  key_hash: string;
  key_name: string;
  key_label: string;
}

interface Page<T> {
  data: T[];
  total_count: number;
}

export const resetOptions: { value: LimitReset | ""; label: string }[] = [
  { value: "", label: "Never" },
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "monthly", label: "Monthly" },
];

export const KEY_PAGE = 100;

/** Follows offset/limit pages until `want` rows (or all of them) are in. */
export async function pages<T>(call: Call, path: string, size: number, signal: AbortSignal, want = Infinity, query: Record<string, string | boolean> = {}): Promise<Page<T>> {
  const data: T[] = [];
  for (;;) {
    const page = await call<Page<T>>(path, { query: { ...query, offset: data.length, limit: size }, signal });
    data.push(...page.data);
    if (page.data.length === 0 || data.length >= page.total_count || data.length >= want) return { data, total_count: page.total_count };
  }
}

/** Every workspace, the default first, following the pages to the last one. */
export async function loadWorkspaces(call: Call, signal: AbortSignal): Promise<Workspace[]> {
  return (await pages<Workspace>(call, "/workspaces", 1000, signal)).data;
}

/**
 * The keys, oldest first, up to `want` of them; the `pinned` ones (keys just created here) come first, each
 * read by itself, since the pages loaded so far may not reach them. A pinned key deleted meanwhile is left out.
 */
export async function loadKeys(call: Call, signal: AbortSignal, want = Infinity, pinned: string[] = []): Promise<Page<ApiKey>> {
  const [listed, first] = await Promise.all([
    pages<ApiKey>(call, "/keys", KEY_PAGE, signal, want, { include_disabled: true }),
    Promise.all(
      pinned.map((hash) =>
        call<{ data: ApiKey }>(`/keys/${hash}`, { signal }).then(
          (answer) => answer.data,
          (e: unknown) => {
            if (e instanceof ApiError && e.status === 404) return null;
            throw e;
          },
        ),
      ),
    ),
  ]);
  const kept = first.filter((k): k is ApiKey => k !== null);
  const placed = new Set(kept.map((k) => k.hash));
  return { data: [...kept, ...listed.data.filter((k) => !placed.has(k.hash))], total_count: listed.total_count };
}

export interface GuardrailIndex {
  guardrails: Guardrail[];
  assignments: KeyAssignment[];
}

export async function loadGuardrailIndex(call: Call, signal: AbortSignal): Promise<GuardrailIndex> {
  const [guardrails, assignments] = await Promise.all([
    pages<Guardrail>(call, "/guardrails", 100, signal),
    pages<KeyAssignment>(call, "/guardrails/assignments/keys", 1000, signal),
  ]);
  return { guardrails: guardrails.data, assignments: assignments.data };
}

/** Assigns and unassigns in batches the API accepts (at most 1000 hashes a call). */
export async function changeAssignments(call: Call, guardrailId: string, add: string[], remove: string[]) {
  for (let i = 0; i < add.length; i += 1000)
    await call(`/guardrails/${guardrailId}/assignments/keys`, { method: "POST", body: { key_hashes: add.slice(i, i + 1000) } });
  for (let i = 0; i < remove.length; i += 1000)
    await call(`/guardrails/${guardrailId}/assignments/keys/remove`, { method: "POST", body: { key_hashes: remove.slice(i, i + 1000) } });
}

/**
 * Digits with at most one decimal point, and nothing else: `Number` alone also reads hexadecimal ("0x10" is 16),
 * exponents ("1e3") and "Infinity", which nobody types meaning an amount.
 */
const plainDecimal = /^(\d+\.?\d*|\.\d+)$/;
const wholeNumber = /^\d+$/;

/** An optional number field: empty means null; anything but a plain decimal is refused before the API sees it. */
export function optionalNumber(text: string, field: string, integer = false): number | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  if (integer && !wholeNumber.test(trimmed)) throw new Error(`${field} must be a whole number, such as 60.`);
  if (!plainDecimal.test(trimmed)) throw new Error(`${field} must be a plain decimal number, such as 0.7.`);
  return Number(trimmed);
}

/** An optional amount of dollars, read as `optionalNumber` reads a number. */
export function optionalMoney(text: string, field: string): number | null {
  const trimmed = text.trim();
  if (trimmed !== "" && !plainDecimal.test(trimmed)) throw new Error(`${field} must be a plain decimal number of dollars, such as 25 or 0.50.`);
  return optionalNumber(trimmed, field);
}

/** A copy of `set` with `item` in it or not, for state that must change by replacement. */
export function toggled<T>(set: Set<T> | null, item: T, on: boolean): Set<T> {
  const next = new Set(set);
  if (on) next.add(item);
  else next.delete(item);
  return next;
}

export const isExpired = (key: ApiKey, now = Date.now()) => key.expires_at !== null && Date.parse(key.expires_at) <= now;

export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));
