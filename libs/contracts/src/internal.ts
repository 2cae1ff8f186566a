import { z } from "zod";
import { limitReset } from "./common.js";
import { generation, generationContent, type Generation, type GenerationContent } from "./generation.js";
import { contentFilterAction, contentFilterBuiltinSlug } from "./guardrails.js";
import { providerKeySlug } from "./provider-keys.js";

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
  /** Server tools (`openrouter:web_search`...) the workspace turned off. */
  disabled_server_tools: z.array(z.string()).nullable().default(null),
  /** The models a request that names none gets, and the provider order requests get by default. */
  default_text_model: z.string().nullable().default(null),
  default_image_model: z.string().nullable().default(null),
  default_provider_sort: z.string().nullable().default(null),
  /** `is_observability_broadcast_enabled`: its generations go to the broadcast destinations. */
  broadcast: z.boolean().default(false),
  /** Providers the workspace brought its own key for, and whether the operator's key may stand in when it fails. */
  byok: z.array(z.object({ provider: z.string(), operator_fallback: z.boolean() })).default([]),
  /** Input/output logging: on, with the share of generations kept; null when off. */
  io_logging: z.object({ sampling_rate: z.number() }).nullable().default(null),
});
export type WorkspacePolicy = z.infer<typeof workspacePolicy>;
export const workspacePolicyBody = z.object({ workspace_id: z.uuid() });
export const workspacePolicyResponse = z.object({ data: workspacePolicy });

/** `POST /internal/federation-policies/active`: whether access tokens a policy issued still act. */
export const policyActiveBody = z.object({ id: z.uuid() });
export const policyActiveResponse = z.object({ active: z.boolean() });

/**
 * `POST /internal/provider-keys/open`: a workspace's own key for a provider, opened for the service about to
 * use it. With `organization_id`, only when the workspace is that organization's: a service that took the
 * workspace id from a request (a management key's `workspace_id`) names the key's organization.
 */
export const openProviderKeyBody = z.object({ organization_id: z.uuid().optional(), workspace_id: z.uuid(), provider: providerKeySlug });
export type OpenProviderKeyBody = z.infer<typeof openProviderKeyBody>;
export const openProviderKeyResponse = z.object({ data: z.object({ key: z.string().nullable() }) });

/** `POST /internal/providers/known`: whether the operator's catalog has a provider. */
export const knownProviderBody = z.object({ slug: z.string().max(64) });
export const knownProviderResponse = z.object({ known: z.boolean() });

/**
 * `POST /internal/generation-content`: inference hands storage what a workspace with input/output logging
 * keeps of a generation; storage holds it `retention`-long in the object store.
 */
export const saveGenerationContentBody = z.object({
  generation_id: z.string().min(1).max(128),
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
  content: generationContent,
});
export type SaveGenerationContent = z.infer<typeof saveGenerationContentBody>;
export const saveGenerationContentResponse = z.object({ saved: z.boolean() });
/** `POST /internal/generation-content/read`: a generation's kept content, 404 when none is kept (or left). */
export const readGenerationContentBody = z.object({ generation_id: z.string().min(1).max(128), organization_id: z.uuid() });

/**
 * `POST /internal/generations/find` (media): one of media's generations as `GET /generation` answers it,
 * in the caller's organization and, unless null, workspace; `data` is null when there is none.
 */
export const findGenerationBody = z.object({ id: z.string().min(1).max(256), organization_id: z.uuid(), workspace_id: z.uuid().nullable() });
export const findGenerationResponse = z.object({ data: generation.nullable() });

/** Who may read a generation: an organization, narrowed to one workspace unless the caller manages it. */
export interface GenerationScope {
  organizationId: string;
  workspaceId: string | undefined;
}

/** Generations another service keeps (media's), found for inference's `GET /generation`. */
export interface GenerationFinder {
  find(id: string, scope: GenerationScope): Promise<Generation | undefined>;
}

/** Storage's side of input/output logging, in-process in standalone and over the internal routes otherwise. */
export interface GenerationContentStore {
  save(entry: SaveGenerationContent): Promise<void>;
  /** Undefined when none is kept for the generation (or its retention has passed). */
  read(generationId: string, organizationId: string): Promise<GenerationContent | undefined>;
}

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
  /** Empty with `default_for`: the workspace's default model of that kind. */
  model: z.string().max(256),
  default_for: z.enum(["text", "image"]).optional(),
  key_hash: z.string(),
  workspace_id: z.uuid(),
  organization_id: z.uuid(),
  /** The hostname the request arrived on; a regional one keeps routing in region. */
  host: z.string().max(253).optional(),
});
/** An exact USD amount, as events, holds and the ledger carry money. */
export const usdDecimal = z.string().regex(/^\d{1,12}(\.\d{1,12})?$/, "must be a decimal amount of USD");

/** Guardrails a key may be bound to by one budget: more would not fit one internal request. */
export const maxBudgetKeys = 50_000;

/**
 * A guardrail's budget: spend of every key it binds, in its window, may not pass `limit_usd`. Catalog owns
 * guardrails and tells identity each change of a budget or of its keys (`POST /internal/guardrail-budgets`)
 * in the transaction that makes it, so a hold reads the budgets where it is taken. `limit_usd` null: the
 * guardrail has no budget (or no longer exists).
 */
export const guardrailBudget = z.object({
  guardrail_id: z.uuid(),
  organization_id: z.uuid(),
  limit_usd: usdDecimal.nullable(),
  reset_interval: limitReset.nullable(),
  include_byok: z.boolean(),
  key_hashes: z.array(z.string().regex(/^[0-9a-f]{64}$/)).max(maxBudgetKeys),
});
export type GuardrailBudget = z.infer<typeof guardrailBudget>;
export const guardrailBudgetsBody = z.object({ budgets: z.array(guardrailBudget).min(1).max(100) });
export const guardrailBudgetsResponse = z.object({ written: z.number().int() });

export const resolvedEndpoint = z.object({
  provider: z.string(),
  adapter: z.string(),
  base_url: z.string(),
  upstream_model: z.string(),
  pricing: z.record(z.string(), z.string()),
  /** Prices of the service tiers the endpoint serves (`flex`, `priority`, `scale`), each over `pricing`. */
  service_tiers: z.record(z.string(), z.record(z.string(), z.string())).optional(),
  /** Prices over `pricing` for a generation whose prompt is above `above_prompt_tokens` tokens. */
  long_context: z.object({ above_prompt_tokens: z.number().int(), pricing: z.record(z.string(), z.string()) }).optional(),
  context_length: z.number().int(),
  max_completion_tokens: z.number().int().nullable(),
  /** Embeddings and rerank: the most inputs one request may carry (null: no limit of the endpoint's own). */
  max_inputs: z.number().int().nullable().default(null),
  supported_parameters: z.array(z.string()),
  region: z.string(),
  zdr: z.boolean(),
  data_policy: z.object({ training: z.boolean(), retains_prompts: z.boolean(), zdr: z.boolean(), publishes_free_prompts: z.boolean().default(false) }),
  quantization: z.string().nullable(),
  /** Variables that may hold the provider's key; the caller reads its own environment, secrets never travel. */
  api_key_env: z.array(z.string()),
  requires_api_key: z.boolean(),
  /** The provider passes signed and encrypted reasoning on to the providers behind it (OpenRouter). */
  relays_reasoning: z.boolean().optional(),
  /** The operator has a key for the provider (or it needs none): false when only the workspace's own can serve it. */
  operator_key: z.boolean().default(true),
  /** The caller's workspace brought its own key for the provider (BYOK): it is tried first. */
  byok: z.object({ operator_fallback: z.boolean() }).nullable().default(null),
});
export type ResolvedEndpoint = z.infer<typeof resolvedEndpoint>;
/**
 * One content filter of a guardrail that applies to the key: a builtin detector, or a workspace pattern
 * (`index`: its place in the guardrail's `content_filters`, which names it in findings).
 */
export const resolvedContentFilter = z.discriminatedUnion("kind", [
  z.object({
    guardrail_id: z.string(),
    kind: z.literal("builtin"),
    slug: contentFilterBuiltinSlug,
    action: contentFilterAction,
    label: z.string(),
    scan_scope: z.enum(["user_only", "all_messages"]).optional(),
  }),
  z.object({
    guardrail_id: z.string(),
    kind: z.literal("pattern"),
    index: z.number().int().min(0),
    pattern: z.string(),
    action: contentFilterAction,
    label: z.string().nullable(),
  }),
]);
export type ResolvedContentFilter = z.infer<typeof resolvedContentFilter>;

export const resolvedModel = z.object({
  requested: z.string(),
  model: z.string(),
  variant: z.string().nullable(),
  /** `price` for `:floor`, `throughput` for `:nitro`, else the workspace's `default_provider_sort`, else null (the router's default choice). */
  sort: z.string().nullable(),
  preset: z
    .object({ id: z.string(), slug: z.string(), version: z.number().int(), system_prompt: z.string(), config: z.record(z.string(), z.unknown()) })
    .nullable(),
  /** What the model takes and produces (`transcription`, `image`...): media checks it serves the operation asked. */
  input_modalities: z.array(z.string()).default(["text"]),
  output_modalities: z.array(z.string()).default(["text"]),
  /** Its author allows distilling its text output (`provider.enforce_distillable_text`). */
  distillable: z.boolean().default(false),
  endpoints: z.array(resolvedEndpoint),
  /** Every provider of the catalog, by slug and display name: what `provider.order`, `only` and `ignore` may name. */
  providers: z.array(z.object({ slug: z.string(), name: z.string() })).optional(),
  excluded: z.array(z.object({ provider: z.string(), reason: z.string() })),
  /** Guardrails that applied to the key (identity finds their budgets where it takes the hold). */
  guardrail_ids: z.array(z.string()),
  /** Their content filters, which every prompt is scanned with before a provider sees it. */
  content_filters: z.array(resolvedContentFilter).default([]),
  /** Server tools the caller's workspace turned off. */
  disabled_server_tools: z.array(z.string()).default([]),
  /** A guardrail of the key turned the response cache off (`disable_response_cache`). */
  response_cache_disabled: z.boolean().default(false),
  /** The caller's workspace broadcasts its generations. */
  broadcast: z.boolean().default(false),
  /** The caller's workspace keeps this share of its generations' content (input/output logging); null when off. */
  io_logging: z.object({ sampling_rate: z.number() }).nullable().default(null),
});
export type ResolvedModel = z.infer<typeof resolvedModel>;
export const resolveModelResponse = z.object({ data: resolvedModel });

/** The same question asked in-process (standalone): catalog answers it for inference and media. */
export interface ResolveRequest {
  /** Empty with `defaultFor`: the workspace's default model of that kind. */
  model: string;
  defaultFor?: "text" | "image" | undefined;
  keyHash: string;
  workspaceId: string;
  organizationId: string;
  host?: string | undefined;
}

/** A replica's id: stable across its restarts where the platform allows (a pod's name, a host and port). */
export const holdOwner = z.string().min(1).max(200);
export const holdLeaseMs = z.number().int().min(1000).max(600_000);

/**
 * `POST /internal/holds`: reserve the worst case of one attempt before a provider is called. One hold per
 * generation: asking again (the next attempt) replaces its amount. Settled by the generation's completion
 * event; expires after `ttl_ms` if never settled.
 */
export const holdBody = z.object({
  generation_id: z.string().min(1).max(128),
  key_hash: z.string().regex(/^[0-9a-f]{64}$/),
  amount_usd: usdDecimal,
  is_byok: z.boolean(),
  ttl_ms: z.number().int().min(1000).max(7 * 86_400_000),
  /**
   * The replica that runs the request, which renews the hold's lease while it lives. A hold whose lease
   * lapsed (its replica died) is released by identity's reaper; one without an owner lives until `ttl_ms`.
   */
  owner: holdOwner.optional(),
  lease_ms: holdLeaseMs.optional(),
});
export type HoldRequest = z.infer<typeof holdBody>;

/** Granted, or refused with what is left (after settled spend and other holds) and whose limit it is. */
export const holdDecision = z.discriminatedUnion("granted", [
  z.object({ granted: z.literal(true) }),
  z.object({
    granted: z.literal(false),
    limited_by: z.enum(["key", "guardrail", "organization"]),
    guardrail_id: z.string().nullable(),
    /** Settled spend has reached the limit: nothing can be afforded until it resets or is raised. */
    exhausted: z.boolean(),
    remaining_usd: usdDecimal,
  }),
]);
export type HoldDecision = z.infer<typeof holdDecision>;
export const holdResponse = z.object({ data: holdDecision });

/** `POST /internal/holds/release`: the generation ended with nothing to charge (failed before its first byte). */
export const releaseHoldBody = z.object({ generation_id: z.string().min(1).max(128) });
export const releaseHoldResponse = z.object({ released: z.boolean() });

/** `POST /internal/holds/renew`: a live replica's heartbeat, extending the lease of every hold it owns. */
export const renewHoldsBody = z.object({ owner: holdOwner, lease_ms: holdLeaseMs });
/**
 * `POST /internal/holds/release-owner`: a replica starting again frees the leased holds of its previous run.
 * `POST /internal/holds/detach`: a replica that drained hands its holds over to their deadline, since the
 * requests ended and their charges are on their way.
 */
export const holdOwnerBody = z.object({ owner: holdOwner });
/** The number of holds a lease route touched. */
export const holdOwnerResponse = z.object({ holds: z.number().int() });
