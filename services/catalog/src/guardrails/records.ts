import { withBuiltinLabels, type Guardrail, type LimitReset } from "@switchyard/contracts";

export interface GuardrailRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: string;
  limit_usd: string | null;
  reset_interval: LimitReset | null;
  include_byok_in_budgets: boolean;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_data_regions: Guardrail["allowed_data_regions"];
  enforce_zdr: boolean | null;
  settings: Partial<GuardrailSettings>;
  created_at: Date;
  updated_at: Date;
}

export const guardrailColumns = `id::text, organization_id::text, workspace_id::text, name, description, limit_usd::text,
  reset_interval, include_byok_in_budgets, allowed_providers, ignored_providers, allowed_models, ignored_models,
  allowed_data_regions, enforce_zdr, settings, created_at, updated_at`;

/** Fields kept together as JSON: nothing queries by them. */
export interface GuardrailSettings {
  enforce_zdr_anthropic: boolean;
  enforce_zdr_openai: boolean;
  enforce_zdr_google: boolean;
  enforce_zdr_xai: boolean;
  enforce_zdr_other: boolean;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  content_filter_builtins: Guardrail["content_filter_builtins"];
  content_filters: Guardrail["content_filters"];
  disable_response_cache: boolean;
}

export const settingNames = [
  "enforce_zdr_anthropic",
  "enforce_zdr_openai",
  "enforce_zdr_google",
  "enforce_zdr_xai",
  "enforce_zdr_other",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "content_filter_builtins",
  "content_filters",
  "disable_response_cache",
] as const satisfies readonly (keyof GuardrailSettings)[];

const defaults: GuardrailSettings = {
  enforce_zdr_anthropic: false,
  enforce_zdr_openai: false,
  enforce_zdr_google: false,
  enforce_zdr_xai: false,
  enforce_zdr_other: false,
  enable_free_model_publication: false,
  enable_free_model_training: false,
  enable_paid_model_training: false,
  content_filter_builtins: [],
  content_filters: null,
  disable_response_cache: false,
};

export function toGuardrail(row: GuardrailRow): Guardrail {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    workspace_id: row.workspace_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    limit_usd: row.limit_usd === null ? null : Number(row.limit_usd),
    reset_interval: row.reset_interval,
    include_byok_in_budgets: row.include_byok_in_budgets,
    allowed_providers: row.allowed_providers,
    ignored_providers: row.ignored_providers,
    allowed_models: row.allowed_models,
    ignored_models: row.ignored_models,
    allowed_data_regions: row.allowed_data_regions,
    enforce_zdr: row.enforce_zdr,
    ...defaults,
    ...row.settings,
    // Rows written before labels were filled on write get the builtin's own label on read.
    content_filter_builtins: withBuiltinLabels(row.settings.content_filter_builtins ?? []),
  };
}
