import { maxModelIdLength, type ResolvedContentFilter, type ResolvedEndpoint, type ResolvedModel, type ResolveRequest, type WorkspacePolicy } from "@switchyard/contracts";
import type { GuardrailRow } from "../guardrails/records.js";
import { badRequest, notFound } from "@switchyard/runtime";
import type { CatalogDeps } from "../deps.js";
import { envName, type EndpointEntry } from "../models/snapshot.js";
import { getPreset } from "../presets/service.js";
import { exclusionOf, isFree } from "./access.js";


const variants = { free: null, floor: "price", nitro: "throughput" } as const;

function toResolved(e: EndpointEntry, workspace: WorkspacePolicy): ResolvedEndpoint {
  const own = workspace.byok.find((k) => k.provider === e.providerEntry.slug);
  const defined = (prices: Record<string, string | undefined>) => Object.fromEntries(Object.entries(prices).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const pricing = defined(e.pricing);
  const serviceTiers = Object.fromEntries(Object.entries(e.service_tiers ?? {}).map(([tier, prices]) => [tier, defined(prices ?? {})]));
  return {
    provider: e.providerEntry.slug,
    adapter: e.providerEntry.adapter,
    base_url: e.providerEntry.base_url,
    upstream_model: e.upstream_model,
    pricing,
    service_tiers: serviceTiers,
    ...(e.long_context ? { long_context: { above_prompt_tokens: e.long_context.above_prompt_tokens, pricing: defined(e.long_context.pricing) } } : {}),
    context_length: e.contextLength,
    max_completion_tokens: e.max_completion_tokens ?? null,
    max_inputs: e.max_inputs ?? null,
    supported_parameters: e.supported_parameters,
    region: e.region,
    zdr: e.zdr,
    data_policy: e.providerEntry.data_policy,
    quantization: e.quantization ?? null,
    api_key_env: [...(e.providerEntry.api_key_env ? [e.providerEntry.api_key_env] : []), envName(e.providerEntry.slug, "API_KEY")],
    requires_api_key: e.providerEntry.requires_api_key,
    ...(e.providerEntry.relays_reasoning ? { relays_reasoning: true } : {}),
    operator_key: e.providerEntry.usable,
    byok: own ? { operator_fallback: own.operator_fallback } : null,
  };
}

function contentFiltersOf(g: GuardrailRow): ResolvedContentFilter[] {
  const builtins = (g.settings.content_filter_builtins ?? []).map((b) => ({
    guardrail_id: g.id,
    kind: "builtin" as const,
    slug: b.slug,
    action: b.action,
    label: b.label,
    ...(b.scan_scope ? { scan_scope: b.scan_scope } : {}),
  }));
  const patterns = (g.settings.content_filters ?? []).map((f, index) => ({
    guardrail_id: g.id,
    kind: "pattern" as const,
    index,
    pattern: f.pattern,
    action: f.action,
    label: f.label ?? null,
  }));
  return [...builtins, ...patterns];
}

/**
 * `<vendor>/<model>[:variant]` (or `<vendor>/<upstream model>`) or `@preset/<slug>` → the endpoints this
 * key may use, and why the others may not. A preset contributes its designated version's model, system prompt and parameters.
 */
export async function resolveModel(deps: CatalogDeps, request: ResolveRequest): Promise<ResolvedModel> {
  let preset: ResolvedModel["preset"] = null;
  // Each dialect's body comes here, not all of them with `model` bounded: an id longer than model ids are is
  // refused before it is looked up or echoed in a message.
  if (request.model.length > maxModelIdLength) throw badRequest(`Invalid body: model: must be at most ${maxModelIdLength} characters`);
  let id = request.model;
  if (!id) {
    // A request that names no model gets its workspace's default of the kind it asks for.
    const kind = request.defaultFor ?? "text";
    const fallback = (await deps.identity.workspacePolicy(request.workspaceId))?.[`default_${kind}_model`];
    if (!fallback) throw badRequest(`Invalid body: model: a model is required (the workspace has no default_${kind}_model)`);
    id = fallback;
  }
  if (id.startsWith("@preset/")) {
    const found = await getPreset(deps.db, { organizationId: request.organizationId, workspaceId: request.workspaceId }, id.slice(8));
    const model = found.designated_version.config.model;
    if (typeof model !== "string") throw badRequest(`Preset ${found.slug} does not name a model`);
    preset = { id: found.id, slug: found.slug, version: found.designated_version.version, system_prompt: found.designated_version.system_prompt, config: found.designated_version.config };
    if (model.length > maxModelIdLength) throw badRequest(`Preset ${found.slug} names a model id longer than ${maxModelIdLength} characters`);
    id = model;
  }
  const snapshot = deps.catalog.current();
  let model = snapshot.modelsById.get(id) ?? snapshot.modelsByUpstream.get(id);
  let variant: string | null = null;
  if (!model && id.includes(":")) {
    const [base, suffix] = [id.slice(0, id.lastIndexOf(":")), id.slice(id.lastIndexOf(":") + 1)];
    if (!(suffix in variants)) throw badRequest(`Unknown model variant :${suffix}; use :free, :floor or :nitro`);
    model = snapshot.modelsById.get(base) ?? snapshot.modelsByUpstream.get(base);
    variant = suffix;
  }
  if (!model) throw notFound(`Model ${id} not found`);
  const [workspace, guardrails] = await Promise.all([deps.identity.workspacePolicy(request.workspaceId), deps.guardrails.forKey(request.keyHash)]);
  if (!workspace) throw notFound("Workspace not found");
  const policy = { workspace, guardrails, variant, region: request.host ? snapshot.regionsByHost.get(request.host.toLowerCase()) : undefined };
  const endpoints: ResolvedEndpoint[] = [];
  const excluded: ResolvedModel["excluded"] = [];
  for (const e of model.endpointEntries) {
    const reason = variant === "free" && !isFree(e) ? "not free" : exclusionOf(e, policy);
    if (reason) excluded.push({ provider: e.providerEntry.slug, reason });
    else endpoints.push(toResolved(e, workspace));
  }
  const sort = variant ? variants[variant as keyof typeof variants] : workspace.default_provider_sort;
  return {
    requested: request.model || id,
    model: model.id,
    variant,
    sort,
    preset,
    input_modalities: model.input_modalities,
    output_modalities: model.output_modalities,
    distillable: model.distillable,
    endpoints,
    providers: snapshot.providers.map((p) => ({ slug: p.slug, name: p.name })),
    excluded,
    guardrail_ids: guardrails.map((g) => g.id),
    content_filters: guardrails.flatMap(contentFiltersOf),
    disabled_server_tools: workspace.disabled_server_tools ?? [],
    response_cache_disabled: guardrails.some((g) => g.settings.disable_response_cache === true),
    broadcast: workspace.broadcast,
    io_logging: workspace.io_logging,
  };
}
