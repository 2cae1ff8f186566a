import type { KeyDescription, WorkspacePolicy } from "@switchyard/contracts";
import type { Queryable } from "@switchyard/runtime";

/** Answers for other services: what they need to know about workspaces and keys, nothing more. */
export async function workspacePolicy(db: Queryable, workspaceId: string): Promise<WorkspacePolicy | undefined> {
  const [row] = await db.query<WorkspacePolicy>(
    `SELECT id::text, organization_id::text, allowed_providers, ignored_providers, data_collection, zdr,
            COALESCE(settings->'disabled_server_tools', 'null'::jsonb) AS disabled_server_tools,
            settings->>'default_text_model' AS default_text_model, settings->>'default_image_model' AS default_image_model,
            settings->>'default_provider_sort' AS default_provider_sort,
            COALESCE((settings->>'is_observability_broadcast_enabled')::boolean, false) AS broadcast,
            CASE WHEN COALESCE((settings->>'is_observability_io_logging_enabled')::boolean, false)
              THEN jsonb_build_object('sampling_rate', COALESCE((settings->>'io_logging_sampling_rate')::float8, 1)) END AS io_logging,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('provider', k.provider, 'operator_fallback', k.operator_fallback) ORDER BY k.provider)
                      FROM identity.provider_keys k WHERE k.workspace_id = w.id), '[]'::jsonb) AS byok
     FROM identity.workspaces w WHERE id = $1`,
    [workspaceId],
  );
  return row;
}

export async function describeKeys(db: Queryable, organizationId: string, hashes: readonly string[]): Promise<KeyDescription[]> {
  if (hashes.length === 0) return [];
  return db.query<KeyDescription>(`SELECT hash, name, label FROM identity.api_keys WHERE organization_id = $1 AND hash = ANY($2::text[])`, [
    organizationId,
    hashes,
  ]);
}
