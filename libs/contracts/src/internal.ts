import { z } from "zod";

/**
 * Contracts of `/internal/...` routes between services. They are not part of the public API and are
 * reachable only with a service token signed by the deployment's internal secret.
 */
export const keyAuthentication = z.object({
  hash: z.string(),
  organization_id: z.string(),
  workspace_id: z.string(),
  disabled: z.boolean(),
  is_management_key: z.boolean(),
  expires_at: z.string().nullable(),
  rate_limit_per_minute: z.number().int().nullable(),
});
export type KeyAuthentication = z.infer<typeof keyAuthentication>;

export const authenticateKeyBody = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });
export const authenticateKeyResponse = z.object({ data: keyAuthentication });

/** A workspace's routing preferences and privacy settings, which catalog and inference honour. */
export const workspacePolicy = z.object({
  id: z.string(),
  organization_id: z.string(),
  allowed_providers: z.array(z.string()).nullable(),
  ignored_providers: z.array(z.string()).nullable(),
  data_collection: z.enum(["allow", "deny"]),
  zdr: z.boolean(),
});
export type WorkspacePolicy = z.infer<typeof workspacePolicy>;
export const workspacePolicyBody = z.object({ workspace_id: z.uuid() });
export const workspacePolicyResponse = z.object({ data: workspacePolicy });

/** Names of keys of one organization; hashes of other organizations' keys are left out. */
export const describeKeysBody = z.object({
  organization_id: z.uuid(),
  hashes: z.array(z.string().regex(/^[0-9a-f]{64}$/)).max(1000),
});
export const keyDescription = z.object({ hash: z.string(), name: z.string(), label: z.string() });
export type KeyDescription = z.infer<typeof keyDescription>;
export const describeKeysResponse = z.object({ data: z.array(keyDescription) });

/** `POST /internal/models/resolve`: a requested model (variant, preset) to the endpoints a key may use. */
export const resolveModelBody = z.object({
  model: z.string().min(1).max(256),
  key_hash: z.string(),
  workspace_id: z.uuid(),
  organization_id: z.uuid(),
  /** The hostname the request arrived on; a regional one keeps routing in region. */
  host: z.string().max(253).optional(),
});
export const resolvedEndpoint = z.object({
  provider: z.string(),
  adapter: z.string(),
  base_url: z.string(),
  upstream_model: z.string(),
  pricing: z.record(z.string(), z.string()),
  context_length: z.number().int(),
  max_completion_tokens: z.number().int().nullable(),
  supported_parameters: z.array(z.string()),
  region: z.string(),
  zdr: z.boolean(),
  data_policy: z.object({ training: z.boolean(), retains_prompts: z.boolean(), zdr: z.boolean() }),
  quantization: z.string().nullable(),
  /** Variables that may hold the provider's key; the caller reads its own environment, secrets never travel. */
  api_key_env: z.array(z.string()),
  requires_api_key: z.boolean(),
});
export type ResolvedEndpoint = z.infer<typeof resolvedEndpoint>;
export const resolvedModel = z.object({
  requested: z.string(),
  model: z.string(),
  variant: z.string().nullable(),
  /** `price` for `:floor`, `throughput` for `:nitro`, else null (the router's default choice). */
  sort: z.enum(["price", "throughput"]).nullable(),
  preset: z
    .object({ slug: z.string(), version: z.number().int(), system_prompt: z.string(), config: z.record(z.string(), z.unknown()) })
    .nullable(),
  endpoints: z.array(resolvedEndpoint),
  excluded: z.array(z.object({ provider: z.string(), reason: z.string() })),
  /** Guardrails that applied to the key; spend is charged against their budgets too. */
  guardrail_ids: z.array(z.string()),
});
export type ResolvedModel = z.infer<typeof resolvedModel>;
export const resolveModelResponse = z.object({ data: resolvedModel });

/** The same question asked in-process (standalone): catalog answers it for inference and media. */
export interface ResolveRequest {
  model: string;
  keyHash: string;
  workspaceId: string;
  organizationId: string;
  host?: string | undefined;
}
