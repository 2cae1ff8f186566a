import type { Workspace } from "@switchyard/contracts";

export interface WorkspaceRow {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  description: string | null;
  is_default: boolean;
  default_guardrail_id: string;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  data_collection: "allow" | "deny";
  zdr: boolean;
  settings: Partial<WorkspaceSettings>;
  created_by: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export const workspaceColumns = `id::text, organization_id::text, name, slug, description, is_default,
  default_guardrail_id::text, allowed_providers, ignored_providers, data_collection, zdr, settings, created_by,
  created_at, updated_at`;

/** Settings kept as one JSON document: nothing in Switchyard queries by them. */
export interface WorkspaceSettings {
  default_image_model: string | null;
  default_text_model: string | null;
  default_provider_sort: string | null;
  disabled_server_tools: string[] | null;
  include_byok_in_budgets: boolean;
  io_logging_api_key_ids: number[] | null;
  io_logging_sampling_rate: number;
  is_data_discount_logging_enabled: boolean;
  is_observability_broadcast_enabled: boolean;
  is_observability_io_logging_enabled: boolean;
}

export const settingNames: readonly (keyof WorkspaceSettings)[] = [
  "default_image_model",
  "default_text_model",
  "default_provider_sort",
  "disabled_server_tools",
  "include_byok_in_budgets",
  "io_logging_api_key_ids",
  "io_logging_sampling_rate",
  "is_data_discount_logging_enabled",
  "is_observability_broadcast_enabled",
  "is_observability_io_logging_enabled",
];

const defaults: WorkspaceSettings = {
  default_image_model: null,
  default_text_model: null,
  default_provider_sort: null,
  disabled_server_tools: null,
  include_byok_in_budgets: false,
  io_logging_api_key_ids: null,
  io_logging_sampling_rate: 1,
  is_data_discount_logging_enabled: false,
  is_observability_broadcast_enabled: false,
  is_observability_io_logging_enabled: false,
};

export function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
    created_by: row.created_by,
    default_guardrail_id: row.default_guardrail_id,
    ...defaults,
    ...row.settings,
    is_default: row.is_default,
    allowed_providers: row.allowed_providers,
    ignored_providers: row.ignored_providers,
    data_collection: row.data_collection,
    zdr: row.zdr,
  };
}
